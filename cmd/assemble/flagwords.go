package main

import (
	"reflect"
	"strings"
	"sync"

	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/packager/artifacts"
	"github.com/cloud-assembly/assemble/packager/cfn"
	"github.com/cloud-assembly/assemble/trust"
)

// An optionFlag is the flag that sets a library option: a library names
// the option as TYPE.FIELD ("BuildOptions.AssetBucket") in its messages,
// never the flag (TestNoLibraryMessageNamesAFlag), and the command prints
// the flag in its place.
type optionFlag struct {
	options any    // the options struct, zero value
	field   string // its field
	flag    string
}

// optionFlags are the options the libraries' messages name that a flag of
// this command sets.
var optionFlags = []optionFlag{
	{packager.BuildOptions{}, "AssetBucket", "--asset-bucket"},
	{packager.BuildOptions{}, "AssetKeyPrefix", "--asset-prefix"},
	{packager.BuildOptions{}, "Environment", "--environment"},
	{packager.BuildOptions{}, "Strict", "--strict"},
	{packager.BuildOptions{}, "SchemasWarn", "--schemas-warn"},
	{artifacts.Options{}, "Bucket", "--asset-bucket"},
	{artifacts.Options{}, "Region", "--region"},
	{cfn.Options{}, "Artifacts", "--asset-bucket"},
	{deploy.Options{}, "RequireApproval", "--require-approval"},
	{deploy.Options{}, "RoleARN", "--role-arn"},
	{deploy.Options{}, "Qualifier", "--qualifier"},
	{deploy.Options{}, "Only", "--only"},
	{deploy.Options{}, "Force", "--force"},
	{deploy.Options{}, "Parameters", "--parameter"},
	{deploy.Options{}, "StagingBucket", "--staging-bucket"},
	{deploy.Options{}, "Capabilities", "--capabilities"},
	{deploy.Options{}, "Target", "--target"},
	{deploy.Options{}, "MaxFailures", "--max-failures"},
	{deploy.Options{}, "Adopt", "--adopt"},
	{deploy.DestroyOptions{}, "Purge", "--purge"},
	{trust.Options{}, "PolicyFile", "--policy"},
	{trust.Options{}, "Keyrings", "--keyring"},
	{trust.Options{}, "MinSigners", "--min-signers"},
	{trust.Options{}, "RequireSigners", "--require-signer"},
	{trust.Options{}, "Algorithms", "--allow-algorithm"},
	{trust.VerifyOptions{}, "AllowUnsigned", "--allow-unsigned"},
}

// optionName is how a library's message names an option: TYPE.FIELD.
func (o optionFlag) optionName() string {
	return reflect.TypeOf(o.options).Name() + "." + o.field
}

var flagReplacer = sync.OnceValue(func() *strings.Replacer {
	var pairs []string
	for _, o := range optionFlags {
		pairs = append(pairs, o.optionName(), o.flag)
	}
	return strings.NewReplacer(pairs...)
})

// flagWords says a library's message in the command's words: each option
// it names becomes the flag that sets it.
func flagWords(s string) string { return flagReplacer().Replace(s) }

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

// awsEnv are the variables moto.Env sets, passed on to the scripts.
var awsEnv = []string{"AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
	"AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_EC2_METADATA_DISABLED"}

// TestDeployScript runs the scripts of testdata/deploy against moto_server
// (skipped, saying why, without it): each flag of deploy and status, and
// each refusal. $KEYS is fixtures/keys; $UNIQ is a name suffix of the
// script's own (the scripts share one moto_server); the uniq command
// writes it into files where they say @UNIQ@.
func TestDeployScript(t *testing.T) {
	moto.Env(t)
	keys, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys"))
	cmds := scriptCmds()
	for name, f := range map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"uniq":        uniqCmd,
		"mkbucket":    mkbucket,
		"cloudls":     cloudls,
		"putobject":   putobject,
		"padtemplate": padtemplate,
	} {
		cmds[name] = f
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "deploy"),
		Setup: func(env *testscript.Env) error {
			for _, k := range awsEnv {
				env.Setenv(k, os.Getenv(k))
			}
			b := make([]byte, 4)
			rand.Read(b)
			env.Setenv("UNIQ", hex.EncodeToString(b))
			env.Setenv("KEYS", keys)
			env.Setenv("DOCS", filepath.Dir(jsonDocsDir()))
			env.Setenv(envJSONDocs, jsonDocsDir())
			env.Defer(func() {
				if b, err := os.ReadFile(filepath.Join(env.WorkDir, violationsFile)); err == nil {
					env.T().Fatal("--json output breaks its schema:\n" + string(b))
				}
			})
			return nil
		},
		Cmds: cmds,
	})
}

func scriptAWS(ts *testscript.TestScript) aws.Config {
	cfg, err := config.LoadDefaultConfig(context.Background())
	ts.Check(err)
	return cfg
}

func scriptS3(ts *testscript.TestScript) *s3.Client {
	return s3.NewFromConfig(scriptAWS(ts), func(o *s3.Options) { o.UsePathStyle = true })
}

// uniq FILE... replaces @UNIQ@ with $UNIQ, and @KEYS@ with $KEYS, in
// each file.
func uniqCmd(ts *testscript.TestScript, neg bool, args []string) {
	for _, a := range args {
		p := ts.MkAbs(a)
		b, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, []byte(strings.NewReplacer("@UNIQ@", ts.Getenv("UNIQ"), "@KEYS@", ts.Getenv("KEYS")).Replace(string(b))), 0o644))
	}
}

// mkbucket NAME creates an S3 bucket.
func mkbucket(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: mkbucket NAME")
	}
	_, err := scriptS3(ts).CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(args[0])})
	ts.Check(err)
}

// cloudls stacks PART prints the live stacks whose name holds PART;
// cloudls objects BUCKET [PREFIX] prints the keys of a bucket.
func cloudls(ts *testscript.TestScript, neg bool, args []string) {
	ctx := context.Background()
	w := ts.Stdout() // empty when nothing is listed
	switch {
	case len(args) == 2 && args[0] == "stacks":
		out, err := cloudformation.NewFromConfig(scriptAWS(ts)).ListStacks(ctx, &cloudformation.ListStacksInput{})
		ts.Check(err)
		for _, s := range out.StackSummaries {
			if s.StackStatus != cfntypes.StackStatusDeleteComplete && strings.Contains(aws.ToString(s.StackName), args[1]) {
				fmt.Fprintf(w, "%s %s\n", aws.ToString(s.StackName), s.StackStatus)
			}
		}
	case len(args) >= 2 && args[0] == "objects":
		in := &s3.ListObjectsV2Input{Bucket: aws.String(args[1])}
		if len(args) == 3 {
			in.Prefix = aws.String(args[2])
		}
		out, err := scriptS3(ts).ListObjectsV2(ctx, in)
		ts.Check(err)
		for _, o := range out.Contents {
			fmt.Fprintln(w, aws.ToString(o.Key))
		}
	default:
		ts.Fatalf("usage: cloudls stacks PART | cloudls objects BUCKET [PREFIX]")
	}
}

// putobject BUCKET KEY TEXT writes an object behind deploy's back.
func putobject(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: putobject BUCKET KEY TEXT")
	}
	_, err := scriptS3(ts).PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(args[0]), Key: aws.String(args[1]), Body: strings.NewReader(args[2])})
	ts.Check(err)
}

// padtemplate FILE N appends template Metadata of N bytes to FILE.
func padtemplate(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: padtemplate FILE N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_APPEND|os.O_WRONLY, 0)
	ts.Check(err)
	defer f.Close()
	_, err = fmt.Fprintf(f, "Metadata:\n  Padding: %s\n", strings.Repeat("x", n))
	ts.Check(err)
}

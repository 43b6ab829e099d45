package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/signing"
)

func buildCmd() *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "build a project (assembly.yaml, a CDK cdk.out, or one template) into a .cloud assembly",
		ArgsUsage: "[PROJECT]",
		Description: `PROJECT is a folder holding assembly.yaml, a CDK cloud assembly (the cdk.out
   folder 'cdk synth' writes, or a CDK app folder holding one), a folder
   holding one template, or a template file (default: the current folder). A
   cdk.out is shipped byte for byte under cdk.out/ with droplets describing
   its stacks and assets; 'assemble extract --cdk-out' gives it back. The
   output defaults to <folder name>.cloud in the current folder; -o - writes
   it to standard output. Entries carry the time in SOURCE_DATE_EPOCH when it
   is set, else 1980-01-01, so rebuilds are identical.

   --sign-key FILE (or --sign-gpg) signs the assembly as it is written, in one
   pass: each file is hashed as it is packed and signature.asc is appended
   at the end, without reading the assembly again; the result is what build
   followed by 'assemble sign' writes. With no signing flag, an armored key
   in $ASSEMBLE_SIGNING_KEY signs it the same way (its passphrase, if any,
   in $ASSEMBLE_PASSPHRASE). --local-user and --passphrase-file work as for
   sign. The summary says who signed it, or "unsigned". A key or passphrase
   given where a FILE belongs is refused by the flag's name; it is never
   printed.

   Every build writes provenance.intoto.json, an in-toto statement with a
   SLSA provenance v1 predicate whose subject is the digest of the other
   files (docs/provenance.md): the git commit of the checkout holding the
   project, the files the packaging read, images by digest, CDK versions.
   Builder and invocation come from --provenance-builder and
   --provenance-invocation, else the CI environment (GitHub Actions, GitLab
   CI, CodeBuild, Buildkite), else they are "local"; times only from the
   --provenance-started/--provenance-finished flags or the CI environment,
   so the same inputs give the same bytes.

   Example: assemble build -o webapp.cloud fixtures/examples/webapp
            assemble build -o webapp.cloud --sign-key release.asc fixtures/examples/webapp
            cdk synth && assemble build -o app.cloud cdk.out`,
		Flags: append([]cli.Flag{
			verboseFlag,
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the assembly to `FILE`"},
			&cli.BoolFlag{Name: "strict", Usage: "fail when anything is missing (a stack parameter with no value and no default)"},
			&cli.StringFlag{Name: "environment", Usage: "default `ENV` for droplets that name none (e.g. aws://123456789012/eu-west-1)"},
			&cli.StringFlag{Name: "asset-bucket", Usage: "upload templates' local artifacts (Lambda code, nested templates, ...) to `BUCKET` (a name or ${Stack.output.Name}; overrides assets: in assembly.yaml)"},
			&cli.StringFlag{Name: "asset-prefix", Usage: "put `PREFIX`/ before the artifacts' object keys"},
			jsonFlag,
			&cli.StringFlag{Name: "schemas", Usage: "check every packaged template against the resource type schemas (*.json) in `DIR`"},
			&cli.BoolFlag{Name: "schemas-warn", Usage: "report --schemas findings as warnings instead of failing the build"},
			&cli.StringFlag{Name: "sign-algorithm", Value: "SHA256", Usage: "with --sign-key or --sign-gpg: hash `ALGORITHM`, SHA256, SHA384 or SHA512"},
			&cli.StringFlag{Name: "provenance-builder", Usage: "the provenance's builder.id `URI` (default: from the CI environment, else " + provenance.LocalBuilder + ")"},
			&cli.StringFlag{Name: "provenance-invocation", Usage: "the provenance's invocationId `ID` (default: from the CI environment, else local)"},
			&cli.StringFlag{Name: "provenance-started", Usage: "the provenance's startedOn `TIME` (RFC 3339; default: from the CI environment where it says it, else none)"},
			&cli.StringFlag{Name: "provenance-finished", Usage: "the provenance's finishedOn `TIME` (RFC 3339; default: none)"},
			quietFlag,
			progressFlag,
		}, buildFlags.flags()...),
		Action: runBuild,
	}
}

func runBuild(c *cli.Context) error {
	if c.NArg() > 1 {
		return usagef("build takes one PROJECT, got %d arguments", c.NArg())
	}
	project := "."
	if c.NArg() == 1 {
		project = c.Args().First()
	}
	output := c.String("output")
	if output == "-" && c.Bool("json") {
		return withHint(usagef("--json and -o - both write to standard output"), "write the assembly to a file with -o FILE")
	}
	if err := refuseTerminal(c, output); err != nil {
		return err
	}
	if output == "" {
		abs, err := filepath.Abs(project)
		if err != nil {
			return err
		}
		if base := filepath.Base(abs); base == packager.ProjectFile || base == "manifest.json" {
			abs = filepath.Dir(abs) // named after the project (or cdk.out) folder
		}
		name := filepath.Base(abs)
		name = strings.TrimSuffix(name, filepath.Ext(name))
		output = name + ".cloud"
	}
	if env := c.String("environment"); env != "" {
		if _, err := assembly.ParseEnvironment(env); err != nil {
			return usagef("--environment: %v (e.g. aws://123456789012/eu-west-1)", err)
		}
	}
	if b := c.String("asset-bucket"); b != "" {
		if err := packager.CheckAssetBucket(b); err != nil {
			return usagef("--asset-bucket: %v", err)
		}
	}
	opts := packager.BuildOptions{
		Strict:         c.Bool("strict"),
		Environment:    c.String("environment"),
		AssetBucket:    c.String("asset-bucket"),
		AssetKeyPrefix: c.String("asset-prefix"),
		Provenance: provenance.Options{
			LookupEnv:    os.LookupEnv,
			BuilderID:    c.String("provenance-builder"),
			InvocationID: c.String("provenance-invocation"),
		},
	}
	for _, f := range []struct {
		flag string
		t    *time.Time
	}{{"provenance-started", &opts.Provenance.StartedOn}, {"provenance-finished", &opts.Provenance.FinishedOn}} {
		if v := c.String(f.flag); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return usagef("--%s %q: want an RFC 3339 time (2026-01-02T03:04:05Z)", f.flag, v)
			}
			*f.t = t
		}
	}
	if err := buildSchemas(c, &opts); err != nil {
		return err
	}
	// Signing in one pass: the keys are read (and a passphrase asked for)
	// before anything is built.
	var ss *signing.StreamSigner
	var keyFiles []string
	if buildFlags.given(c) { // --sign-key, --sign-gpg or $ASSEMBLE_SIGNING_KEY
		alg, err := signing.ParseAlgorithm(c.String("sign-algorithm"))
		if err != nil {
			return algorithmError("--sign-algorithm", err)
		}
		now := time.Now()
		signers, read, err := buildFlags.signers(c, now)
		if err != nil {
			return err
		}
		if ss, err = signing.NewStreamSigner(c.Context, signers, &signing.SignOptions{Algorithm: alg, Now: func() time.Time { return now }}); err != nil {
			return sealError("build", project, err)
		}
		opts.Sealer, keyFiles = ss, read
	} else if len(c.StringSlice("local-user")) > 0 || c.String("passphrase-file") != "" || c.IsSet("sign-algorithm") {
		return usagef("--local-user, --passphrase-file and --sign-algorithm go with --sign-key FILE or --sign-gpg")
	}
	prog := newProgress(c, "building "+output)
	opts.Progress = prog.Func()
	plan, err := packager.Load(project, opts)
	if err != nil {
		return onFile("build", project, err)
	}
	// The one output writer: never over a file the build read (the
	// signing keys included) nor into a folder it ships; the digest is
	// hashed from the bytes as they are written.
	oo := outputOptions(c, keyFiles, true)
	w, err := plan.Write(c.Context, output, &packager.WriteOptions{Stdout: oo.Stdout, Inputs: oo.Inputs, Waiting: oo.Waiting})
	prog.Done()
	if err = outputError(err); err != nil {
		if ss != nil {
			return sealError("build", project, err)
		}
		return onFile("build", project, err)
	}
	var signers []*signerResult
	signed := ", unsigned"
	if ss != nil {
		for _, s := range ss.Sealed().New() {
			signers = append(signers, newSignerResult(s))
		}
		signed = ", signed by " + describeSignatures(ss.Sealed().New())
	}
	for _, in := range slices.Compact(slices.Sorted(slices.Values(plan.Inputs()))) {
		verbosef(c, "read %s", in)
	}
	for _, w := range plan.Warnings {
		warnf(c, "%s", w)
	}
	if c.Bool("json") {
		return printJSON(c, buildResult{
			File:     output,
			Output:   output,
			SHA256:   w.Digest,
			Size:     w.Size,
			Droplets: plan.Report.Order,
			Files:    plan.Files(),
			Missing:  sortedMissing(plan.Manifest),
			Warnings: diagnosticsJSON(plan.Warnings),
			Signed:   ss != nil,
			Signers:  signers,
		})
	}
	out := c.App.Writer
	if w.Direct {
		out = c.App.ErrWriter // the assembly went to standard output
	}
	printf(c, out, "built %s: %s, %s%s\n", output, plural.Count(len(plan.Manifest.Droplets), "droplet"), plural.Count(len(plan.Files()), "file"), signed)
	printf(c, out, "%s\n", w.Digest)
	for _, k := range sortedMissing(plan.Manifest) {
		printf(c, out, "missing: %s\n", k)
	}
	return nil
}

type buildResult struct {
	File string `json:"file"`
	// Output is File under its old name, kept one release (deprecated).
	Output   string           `json:"output"`
	SHA256   digest.Digest    `json:"sha256"`
	Size     int64            `json:"size"`
	Droplets []string         `json:"droplets"`
	Files    []string         `json:"files"`
	Missing  []string         `json:"missing"`
	Warnings []diagnosticJSON `json:"warnings"`
	// Signed says whether the build signed it; Signers are the keys that
	// did (build --sign-key, --sign-gpg, $ASSEMBLE_SIGNING_KEY).
	Signed  bool            `json:"signed"`
	Signers []*signerResult `json:"signers,omitempty"`
}

type diagnosticJSON struct {
	Level   string `json:"level"`
	Rule    string `json:"rule,omitempty"`
	Droplet string `json:"droplet,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func diagnosticsJSON(fs []assembly.Finding) []diagnosticJSON {
	out := []diagnosticJSON{}
	for _, f := range fs {
		out = append(out, diagnosticJSON{f.Severity.String(), f.Rule, f.Droplet, f.Field, flagWords(f.Message)})
	}
	return out
}

// sortedMissing is never nil: JSON shows no missing parameters as [].
func sortedMissing(m *assembly.Manifest) []string {
	return append([]string{}, slices.Sorted(maps.Keys(m.Missing))...)
}

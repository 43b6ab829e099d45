package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/plural"
)

func deployCmd() *cli.Command {
	return &cli.Command{
		Name:      "deploy",
		Usage:     "verify an assembly, then deploy its droplets to AWS from the verified bytes",
		ArgsUsage: "ASSEMBLY",
		Description: `Verifies the assembly exactly as 'assemble verify' does (same trust flags and
--policy file; signed by trusted keys unless --allow-unsigned), then checks,
before anything in the cloud changes:
   - the target (--target NAME) when the assembly declares targets: its
     signed environments, values (${target.NAME}), tags and deployRole; the
     policy file's targets: may restrict them;
   - every account a droplet deploys to or is read from is reached, with
     credentials for its account and region: the caller's own (STS), else
     --role-arn, the target's deployRole, or the CDK bootstrap roles of a
     bootstrapped account (--qualifier); unknown-account and unknown-region
     mean the target's, else the caller's own;
   - every entry under the manifest's 'missing' is supplied (--parameter
     Service.AlertEmail=x for a stack parameter);
   - no droplet carries 'error' metadata (--force deploys it anyway;
     warnings are shown);
   - every droplet's type has a deployer: stacks, files, directories and
     Docker images saved or built do (a build needs a Docker engine);
     a Blueprint or any other type is refused unless --only leaves it out;
   - what the account holds (read only): every stack name is one
     CloudFormation accepts and no two droplets name one stack in one account
     and region; a stack that exists under a droplet's name was made by that
     droplet (its assemble:droplet tag names it), unless --adopt ID names the
     droplet; the staging bucket exists, and so does every bucket a file or
     directory droplet names.
Large templates are then staged, before any stack changes.
Then the droplets deploy in dependency order (dependsOn and ${Id.attr}
references, resolved from what was deployed), --concurrency at a time. Every
byte sent is read from the verified archive, never from disk.

   stack        a change set, executed (--method change-set, the default), or
                CreateStack/UpdateStack (--method direct); a template over
                51,200 bytes is staged in --staging-bucket first; IAM
                capabilities only with --capabilities; skipped when it runs
                all the droplet signs already: template, every parameter
                (template defaults too), tags, stack policy, termination
                protection, notification ARNs, nested stacks' templates
   file         PutObject, skipped when the object holds the signed bytes
                (S3's SHA-256 checksum, else read back; never metadata)
   directory    the same per file under keyPrefix, or one zip at objectKey;
                the prefix is the droplet's: objects under it that the
                assembly does not hold are named, and deleted with --prune
   docker-image the 'docker image save' archive pushed to pushTarget:tagName
                (ECR through the ECR API, others through the Docker
                credential store; plain HTTP to loopback registries only)
   docker-build built by the local Docker engine from the verified context
                (docker build -), pushed to the account's ECR repository;
                skipped when the tag exists

Stacks are tagged assemble:sha256 (the .cloud file's SHA-256) and
assemble:droplet (the logical ID); objects carry the same as metadata
(assemble-sha256, assemble-droplet) with assemble-content-sha256. A failed
droplet stops those that depend on it; a rerun continues where it stopped.
Ctrl-C starts no new step, says what was in flight, and exits 130.

--plan goes as far as the first change: it shows each droplet's steps, each
stack's change set (created, described, deleted), what would be uploaded or
pushed, and the references known only after deploy. It leaves nothing.

POLICY FILE: besides verify's trust section (see 'assemble verify --help'),
a --policy file's deploy section may name the staging bucket and the
capabilities deploy may grant (--staging-bucket names another bucket,
--capabilities adds to them), the approval level (--require-approval
replaces it), the targets deploy, status and destroy may choose (any when
absent), and the stack parameters a deployer may set with --parameter
beyond the assembly's missing ones:
   deploy:
     staging-bucket: release-assets-eu-west-1
     capabilities: [IAM, AUTO_EXPAND]
     require-approval: broadening
     targets: [staging]
     deployer-parameters: [Api.LogLevel]

AWS is configured the standard way: profiles, SSO, the environment,
AWS_ENDPOINT_URL. Credentials are never printed.

EXIT CODES:
   0    deployed (or planned)
   1    refused, or a droplet failed
   2    usage error
   130  interrupted

Examples:
   assemble deploy --keyring release.pub.asc app.cloud
   assemble deploy --keyring release.pub.asc --plan app.cloud
   assemble deploy --keyring release.pub.asc oci://registry.example.com/team/app:1.4.0
   assemble deploy --policy release-policy.yaml --parameter Service.AlertEmail=ops@example.com app.cloud`,
		Flags: assemblyFlags("deploy",
			&cli.BoolFlag{Name: "plan", Usage: "show what deploy would do, changing nothing"},
			&cli.StringSliceFlag{Name: "parameter", Usage: "supply a stack parameter the assembly leaves `ID.NAME=VALUE` (repeatable)"},
			&cli.StringSliceFlag{Name: "only", Usage: "deploy only the droplet `ID` (repeatable); references to others are read from what is deployed"},
			&cli.BoolFlag{Name: "prune", Usage: "delete the objects under a directory droplet's keyPrefix that the assembly does not hold"},
			&cli.IntFlag{Name: "concurrency", Value: deploy.DefaultConcurrency, Usage: "deploy up to `N` independent droplets at once"},
			&cli.StringFlag{Name: "method", Value: string(deploy.ChangeSet), Usage: "deploy stacks with a `change-set` or directly (direct)"},
			&cli.StringFlag{Name: "staging-bucket", Usage: "S3 `BUCKET` that receives templates over 51,200 bytes"},
			&cli.StringSliceFlag{Name: "capabilities", Usage: "grant stacks the `CAPABILITY` IAM, NAMED_IAM or AUTO_EXPAND (repeatable)"},
			&cli.BoolFlag{Name: "force", Usage: "deploy droplets that carry error metadata"},
			&cli.StringSliceFlag{Name: "adopt", Usage: "let the stack droplet `ID` deploy over an existing stack of its name that it did not make (repeatable)"},
			&cli.StringFlag{Name: "require-approval", Usage: "ask before deploying `never`, any-change or broadening changes (default broadening, or the policy file's require-approval)"},
			&cli.BoolFlag{Name: "change-set", Usage: "with --plan: also make a change set per changed stack for CloudFormation's replacement verdicts (deleted after)"},
			&cli.BoolFlag{Name: "no-execute", Usage: "make each changed stack's change set and leave it, not executed (as cdk deploy --no-execute)"},
			&cli.BoolFlag{Name: "no-rollback", Usage: "keep what a failed stack operation made, for a look (CloudFormation's DisableRollback)"},
			&cli.StringFlag{Name: "outputs-file", Usage: "write every stack's outputs to `FILE` as JSON, as cdk deploy --outputs-file does (after a failure too; a target over several account/region pairs: by pair first)"},
			&cli.StringFlag{Name: "events", Usage: "write what happens to `FILE` as JSON lines (with --json they go to standard error otherwise)"},
			&cli.IntFlag{Name: "max-failures", Usage: "let `N` account/region pairs of the target fail before the pairs not started yet are left unstarted"},
		),
		Action: func(c *cli.Context) error {
			opts, err := deployOptions(c)
			if err != nil {
				return err
			}
			name, src, vres, err := openDeploySource(c)
			defer vres.close()
			if err != nil {
				return err
			}
			a := vres.assembly
			// The droplets' warning and error metadata were shown by the
			// check, before anything deploys (the [metadata] findings).
			if c.Bool("plan") {
				// The plan is the diff (diff.go), under the policy file's
				// deploy section as the deploy is; a target over several
				// account/region pairs has a section per pair.
				planOpts, err := opts.WithPolicy(a.Trust())
				if err != nil {
					return err
				}
				return runDiff(c, name, src, vres, deploy.DiffOptions{Options: planOpts, ChangeSet: c.Bool("change-set")})
			}
			opts.Approve = terminalApprover(c)
			closeEvents, err := eventSink(c, &opts, name)
			if err != nil {
				return err
			}
			defer closeEvents()
			out := deployJSON{File: name, SHA256: a.Digest(), Authenticated: vres.Authenticated, Signer: vres.Signer}
			if !c.Bool("json") {
				printSource(c, name, vres)
			}
			res, err := deploy.Run(c.Context, a, opts)
			out.fill(res)
			if werr := writeStackOutputs(c, name, res); werr != nil && err == nil {
				err = werr
			}
			if err != nil {
				switch {
				case c.Bool("json"):
				case len(res.Pairs) > 0:
					printDeploy(c, name, res) // a summary per pair, then the error
				default:
					printDeployTable(c, res) // what each droplet came to, failed or not
				}
				return withResult(deployError(onFile("deploy", name, err)), out)
			}
			if c.Bool("json") {
				return printJSON(c, out)
			}
			printDeploy(c, name, res)
			return nil
		},
	}
}

// deployFlagNames are deploy's flags by the deploy.Options field each
// sets (deploy.Options.Check names the field).
var deployFlagNames = map[string]string{"Method": "--method", "MaxFailures": "--max-failures", "RequireApproval": "--require-approval"}

// deployOptions translates the flags; deploy.Options.Check judges them,
// before the assembly is read.
func deployOptions(c *cli.Context) (deploy.Options, error) {
	o, err := commonDeployOptions(c)
	if err != nil {
		return o, err
	}
	o.MaxFailures = c.Int("max-failures")
	o.Method = deploy.Method(c.String("method"))
	o.Plan = c.Bool("plan")
	o.Prune = c.Bool("prune")
	o.Adopt = c.StringSlice("adopt")
	o.NoExecute = c.Bool("no-execute")
	o.NoRollback = c.Bool("no-rollback")
	if err := o.Check(); err != nil {
		return o, usageError{flagNamed(err, deployFlagNames)}
	}
	if o.RequireApproval, err = approvalLevel(c); err != nil {
		return o, err
	}
	if !c.Bool("quiet") {
		w := c.App.ErrWriter
		o.Progress = func(e deploy.Event) {
			if !chatter(e) {
				fmt.Fprintf(w, "assemble: %s: %s\n", eventWho(e), flagWords(e.Message))
			}
		}
	}
	return o, nil
}

// openDeploySource verifies the command's one ASSEMBLY argument as verify
// does (the one place deploy and status open it) and returns its name and
// what deploy reads (vres.assembly is the verified handle deploy.Run
// takes); vres is to be closed, after an error too.
func openDeploySource(c *cli.Context) (string, *deploy.Source, *verifyResult, error) {
	none := &verifyResult{close: func() {}}
	if c.NArg() != 1 {
		return "", nil, none, usagef("%s takes one ASSEMBLY argument, got %d", c.Command.Name, c.NArg())
	}
	name := c.Args().First()
	res, err := verifyAssembly(c, name, c.Bool("allow-unsigned"))
	if err != nil {
		if c.Context.Err() != nil {
			err = interrupted{err}
		}
		return res.File, nil, res, withResult(err, res.failure())
	}
	return res.File, deploy.FromAssembly(res.assembly), res, nil
}

// deployJSON is what deploy prints with --json (docs/json/deploy.json).
type deployJSON struct {
	File          string              `json:"file"`
	SHA256        digest.Digest       `json:"sha256"`
	Authenticated bool                `json:"authenticated"`
	Signer        *signerResult       `json:"signer,omitempty"`
	Plan          bool                `json:"plan"`
	Account       string              `json:"account,omitempty"`
	Order         []string            `json:"order"`
	Droplets      []dropletDeployJSON `json:"droplets"`
	Notices       []deploy.Notice     `json:"notices"`
	InFlight      []string            `json:"inFlight,omitempty"`
	// Target is the target deployed; Pairs its account/region pairs when
	// it has several (one result each, in its order).
	Target string           `json:"target,omitempty"`
	Pairs  []pairDeployJSON `json:"pairs,omitempty"`
}

// pairDeployJSON is one account/region pair of a target's matrix.
type pairDeployJSON struct {
	Environment string              `json:"environment"`
	Outcome     string              `json:"outcome"`
	Order       []string            `json:"order"`
	Droplets    []dropletDeployJSON `json:"droplets"`
	InFlight    []string            `json:"inFlight,omitempty"`
	Error       *errorJSON          `json:"error,omitempty"`
}

func dropletsJSON(ds []*deploy.DropletResult) []dropletDeployJSON {
	out := []dropletDeployJSON{}
	for _, d := range ds {
		j := dropletDeployJSON{DropletResult: d}
		if d.Err != nil {
			e := newErrorJSON(d.Err, "")
			j.Error = &e
		}
		out = append(out, j)
	}
	return out
}

type dropletDeployJSON struct {
	*deploy.DropletResult
	Error *errorJSON `json:"error,omitempty"`
}

func (o *deployJSON) fill(res *deploy.Result) {
	o.Plan, o.Account, o.Order, o.Notices, o.InFlight, o.Target = res.Plan, res.Account, res.Order, res.Notices, res.InFlight, res.Target
	o.Droplets = dropletsJSON(res.Droplets)
	for _, p := range res.Pairs {
		pj := pairDeployJSON{Environment: p.Environment, Outcome: string(p.Outcome()), Order: p.Order, Droplets: dropletsJSON(p.Droplets), InFlight: p.InFlight}
		if p.Error != "" {
			e := errorJSON{Code: codeOf(p.Err()), Message: p.Error}
			pj.Error = &e
		}
		o.Pairs = append(o.Pairs, pj)
	}
}

// printSource says what deploy and status read: the file's SHA-256 and
// who signed it.
func printSource(c *cli.Context, name string, v *verifyResult) {
	if v.Signer == nil {
		printf(c, c.App.Writer, "%s: %s, UNSIGNED, not authenticated\n", name, v.SHA256)
		return
	}
	printf(c, c.App.Writer, "%s: %s, signed by %q (%s)\n", name, v.SHA256, v.Signer.UserID, v.Signer.Fingerprint)
}

func printDeploy(c *cli.Context, name string, res *deploy.Result) {
	if len(res.Pairs) > 0 {
		printDroplets(c, res, "")
		byOutcome := map[string]int{}
		for _, p := range res.Pairs {
			out := string(p.Outcome())
			byOutcome[out]++
			printf(c, c.App.Writer, "%s: %s\n", p.Environment, out)
			printDroplets(c, p, "   ")
			if p.Error != "" && out == "not-started" {
				printf(c, c.App.Writer, "   %s\n", p.Error)
			}
		}
		var parts []string
		for _, o := range []string{"deployed", "planned", "failed", "not-started"} {
			if byOutcome[o] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", byOutcome[o], o))
			}
		}
		verb := "deployed"
		if res.Plan {
			verb = "planned"
		}
		printf(c, c.App.Writer, "%s target %s from %s to %s: %s\n", verb, res.Target, name, plural.Count(len(res.Pairs), "account/region pair"), strings.Join(parts, ", "))
		return
	}
	counts := printDroplets(c, res, "")
	var parts []string
	for _, o := range []deploy.Outcome{deploy.Created, deploy.Updated, deploy.ChangeSetCreated, deploy.Uploaded, deploy.Pushed, deploy.Unchanged, deploy.Planned} {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[o], o))
		}
	}
	verb := "deployed"
	if res.Plan {
		verb = "planned"
	}
	if !res.Plan {
		printDeployTable(c, res)
	}
	where := "account " + res.Account
	if res.Target != "" {
		where = "target " + res.Target + " (" + strings.TrimPrefix(targetEnv(res), "aws://") + ")"
	}
	printf(c, c.App.Writer, "%s %s from %s to %s: %s\n", verb, plural.Count(len(res.Order), "droplet"), name, where, strings.Join(parts, ", "))
}

// targetEnv is the environment of a one-pair target's droplets.
func targetEnv(res *deploy.Result) string {
	for _, d := range res.Droplets {
		if d.Outcome != deploy.Excluded && strings.HasPrefix(d.Environment, "aws://") {
			return d.Environment
		}
	}
	return res.Account
}

// printDroplets prints each droplet's outcome and steps, indented, and
// counts the outcomes.
func printDroplets(c *cli.Context, res *deploy.Result, indent string) map[deploy.Outcome]int {
	counts := map[deploy.Outcome]int{}
	for _, d := range res.Droplets {
		if d.Outcome == deploy.Excluded {
			continue
		}
		counts[d.Outcome]++
		printf(c, c.App.Writer, "%s%s (%s): %s\n", indent, d.ID, d.Alias, d.Outcome)
		for _, a := range d.Actions {
			printf(c, c.App.Writer, "%s   %s\n", indent, a)
		}
		for _, ch := range d.Changes {
			line := fmt.Sprintf("   %-6s %s (%s)", ch.Action, ch.LogicalID, ch.Type)
			if ch.Replacement != "" {
				line += " replacement: " + ch.Replacement
			}
			printf(c, c.App.Writer, "%s%s\n", indent, line)
		}
		for _, k := range slices.Sorted(maps.Keys(d.Attributes)) {
			printf(c, c.App.Writer, "%s   %s = %s\n", indent, k, d.Attributes[k])
		}
	}
	return counts
}

// targetFlags choose the assembly's target and how its accounts are
// reached (deploy, status, destroy).
func targetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "target", Usage: "the assembly's target (stage) `NAME`: its signed environments, values, tags and role"},
		&cli.StringFlag{Name: "role-arn", Usage: "assume role `ARN` in accounts the credentials are not in (${AWS::AccountId} and ${AWS::Region} stand for the droplet's)"},
		&cli.StringFlag{Name: "qualifier", Value: deploy.DefaultQualifier, Usage: "the CDK bootstrap `QUALIFIER` of the bootstrap roles"},
		&cli.StringFlag{Name: "region", Usage: "the AWS `REGION` of environment-agnostic droplets and of the calls (as AWS_REGION sets it)"},
		&cli.StringFlag{Name: "profile", Usage: "the shared AWS configuration `PROFILE` (as AWS_PROFILE sets it)"},
	}
}

// deployError marks an interrupted deploy (exit 130).
func deployError(err error) error {
	if errors.Is(err, deploy.ErrInterrupted) || errors.Is(err, context.Canceled) {
		return interrupted{err}
	}
	return err
}

// interrupted exits 130.
type interrupted struct{ error }

func (i interrupted) Unwrap() error { return i.error }
func (interrupted) ExitCode() int   { return 130 }

func statusCmd() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "verify an assembly, then tell whether what is deployed matches it",
		ArgsUsage: "ASSEMBLY",
		Description: `Verifies the assembly as 'assemble verify' does (same trust flags), then
compares, droplet by droplet, what is deployed in its account and region
(--target as deploy takes it; one result per account/region pair) with
what the assembly holds: each stack's template (GetTemplate) and parameters,
each object's bytes (by the SHA-256 deploy stored with it, else by reading
the object), each image tag's digest. References are resolved from what is
deployed. Nothing changes, and nothing only a deploy needs is asked for (no
staging bucket, no Docker engine).

Each droplet is one of:
   match     what runs is what the assembly holds; when another assembly's
             deploy made it (the droplet did not change since), that one is
             named: "(deployed by assembly sha256:...)"
   absent    nothing of it is deployed
   differs   each difference is named (a stack not made by this droplet is
             one)
   unknown   it cannot be compared here, and why
With -q nothing is printed when everything matches; otherwise only the
droplets that do not match.

EXIT CODES:
   0  everything deployed matches the assembly
   1  something is absent or differs (each is named), or the assembly was refused
   2  usage error

Examples:
   assemble status --keyring release.pub.asc app.cloud
   assemble status --keyring release.pub.asc s3://releases/app/1.4.0.cloud`,
		Flags: assemblyFlags("compare",
			&cli.StringSliceFlag{Name: "only", Usage: "compare only the droplet `ID` (repeatable)"},
			&cli.BoolFlag{Name: "drift", Usage: "also run CloudFormation's drift detection on each stack and name the resources and properties changed outside it"},
		),
		Action: func(c *cli.Context) error {
			name, src, vres, err := openDeploySource(c)
			defer vres.close()
			if err != nil {
				return err
			}
			if !c.Bool("json") {
				printSource(c, name, vres)
			}
			so := deploy.Options{Only: c.StringSlice("only"), Target: c.String("target"), RoleARN: c.String("role-arn"), Qualifier: c.String("qualifier"),
				Region: c.String("region"), Profile: c.String("profile"), Drift: c.Bool("drift")}
			// The policy file's deploy section: parameters it lets
			// deployers set are not compared.
			if so, err = so.WithPolicy(vres.assembly.Trust()); err != nil {
				return err
			}
			st, err := deploy.Status(c.Context, src, so)
			out := statusJSON{File: name, Authenticated: vres.Authenticated, Signer: vres.Signer, StatusResult: st}
			if err != nil && !errors.Is(err, deploy.ErrDiffers) {
				return withResult(deployError(onFile("status", name, err)), out)
			}
			if c.Bool("json") {
				if err != nil {
					return withResult(onFile("status", name, err), out)
				}
				return printJSON(c, out)
			}
			printStatus(c, st, "")
			for _, p := range st.Pairs {
				state := "matches"
				switch {
				case p.Error != "":
					state = "not compared: " + p.Error
				case !p.Match:
					state = "differs"
				}
				if c.Bool("quiet") && state == "matches" {
					continue
				}
				fmt.Fprintf(c.App.Writer, "%s: %s\n", p.Environment, state)
				printStatus(c, p, "   ")
			}
			if err != nil {
				return onFile("status", name, err)
			}
			where := "account " + st.Account
			if st.Target != "" {
				where = "target " + st.Target
				if len(st.Pairs) > 0 {
					where += fmt.Sprintf(" (%s)", plural.Count(len(st.Pairs), "account/region pair"))
				}
			}
			printf(c, c.App.Writer, "%s: what is deployed in %s matches the assembly\n", name, where)
			return nil
		},
	}
}

// printStatus prints each compared droplet's state, indented (with -q,
// only what does not match).
func printStatus(c *cli.Context, st *deploy.StatusResult, indent string) {
	for _, d := range st.Droplets {
		if d.State == "excluded" || (c.Bool("quiet") && d.State == "match") {
			continue
		}
		line := fmt.Sprintf("%s (%s): %s", d.ID, d.Alias, d.State)
		if d.DeployedBy != nil {
			line += fmt.Sprintf(" (deployed by assembly %s)", d.DeployedBy)
		}
		fmt.Fprintf(c.App.Writer, "%s%s\n", indent, line)
		for _, diff := range d.Differences {
			fmt.Fprintf(c.App.Writer, "%s   %s\n", indent, diff)
		}
		if d.Error != "" {
			fmt.Fprintf(c.App.Writer, "%s   %s\n", indent, flagWords(d.Error))
		}
		printDrift(c.App.Writer, indent, d.Drift)
	}
}

// statusJSON is what status prints with --json (docs/json/status.json).
type statusJSON struct {
	File          string        `json:"file"`
	Authenticated bool          `json:"authenticated"`
	Signer        *signerResult `json:"signer,omitempty"`
	*deploy.StatusResult
}

// assemblyFlags are the flags of a command that verifies one assembly and
// acts on it (to act: what it does, "deploy"): the trust flags,
// --allow-unsigned, the command's own, then --strict, --json, -q and
// --progress. extract's are the same ("extract").
func assemblyFlags(act string, own ...cli.Flag) []cli.Flag {
	fs := append(trustFlags(), &cli.BoolFlag{Name: "allow-unsigned", Usage: act + " an unsigned assembly after checking structure and manifest (authenticates nothing)"}, digestFlag, timeoutFlag())
	if act != "extract" {
		fs = append(fs, targetFlags()...)
	}
	fs = append(fs, own...)
	return append(fs, strictFlag, jsonFlag, quietFlag, progressFlag)
}

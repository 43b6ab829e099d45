package provenance

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Options are the explicit inputs of a provenance: what a build says
// about its run beyond its project. Nothing here is read from a clock, so
// the same options give the same provenance.
type Options struct {
	// LookupEnv reads the CI environment (os.LookupEnv); nil reads none,
	// and the build is local.
	LookupEnv func(string) (string, bool)
	// BuilderID and InvocationID, when set, override what the CI
	// environment says.
	BuilderID, InvocationID string
	// StartedOn and FinishedOn, when set, are the build's times;
	// StartedOn otherwise comes from the CI environment where it says it.
	StartedOn, FinishedOn time.Time
	// NoGit leaves the project's git checkout unread.
	NoGit bool
}

// Inputs are what the build knows about what it built.
type Inputs struct {
	// Project is the project's source file, relative to its folder.
	Project string
	// Dir is the project folder: the git checkout holding it, if any, is
	// the source.
	Dir string
	// Environment is the default environment, Target the output's name.
	Environment, Target string
	// Dependencies are what else the build resolved (images by digest,
	// module and blueprint sources, CDK versions); New sorts them.
	Dependencies []Resource
}

// New makes the statement of a build, without its subject (Seal sets it
// once the content is hashed). Builder and invocation come from opts,
// else the CI environment, else they are local (LocalBuilder, Local).
func New(ctx context.Context, in Inputs, opts Options) *Statement {
	run := DetectRun(opts.LookupEnv)
	p := SLSAPredicate{
		BuildDefinition: BuildDefinition{
			BuildType:          BuildType,
			ExternalParameters: ExternalParameters{Project: in.Project, Environment: in.Environment, Target: in.Target},
		},
		RunDetails: RunDetails{
			Builder:  Builder{ID: firstOf(opts.BuilderID, run.BuilderID, LocalBuilder)},
			Metadata: BuildMetadata{InvocationID: firstOf(opts.InvocationID, run.InvocationID, Local)},
		},
	}
	if t := firstTime(opts.StartedOn, run.StartedOn); !t.IsZero() {
		p.RunDetails.Metadata.StartedOn = &t
	}
	if t := opts.FinishedOn.UTC(); !opts.FinishedOn.IsZero() {
		p.RunDetails.Metadata.FinishedOn = &t
	}
	src := Source{Repository: run.Repository, Ref: run.Ref, Commit: run.Commit}
	if !opts.NoGit && in.Dir != "" {
		if g, ok := ReadGit(ctx, in.Dir); ok {
			// The checkout is what was built; the CI's repository URL
			// (without credentials) is preferred to the remote's.
			src.Commit = g.Commit
			src.Repository = firstOf(src.Repository, g.Repository)
			if src.Ref == "" || run.Commit != g.Commit {
				src.Ref = g.Ref
			}
		}
	}
	deps := append([]Resource(nil), in.Dependencies...)
	sort.SliceStable(deps, func(i, j int) bool {
		if deps[i].Name != deps[j].Name {
			return deps[i].Name < deps[j].Name
		}
		return deps[i].URI < deps[j].URI
	})
	if r, ok := src.Resource(); ok {
		deps = append([]Resource{r}, deps...)
	}
	p.BuildDefinition.ResolvedDependencies = deps
	return &Statement{Type: StatementType, PredicateType: PredicateType, Predicate: p}
}

// Seal sets the statement's one subject: the content digest (see
// ContentDigest).
func (s *Statement) Seal(dirHash string) {
	s.Subject = []Subject{{Name: SubjectName, Digest: map[string]string{DirHash: dirHash}}}
}

func firstTime(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t.UTC()
		}
	}
	return time.Time{}
}

// SourceName is the name of the resolved dependency that is the build's
// source.
const SourceName = "source"

// A Source is the source a build came from.
type Source struct {
	Repository, Ref, Commit string
}

// Resource is the source as a resolved dependency: uri
// "git+REPOSITORY@REF" (SLSA's convention) and digest gitCommit. ok is
// false when nothing is known.
func (s Source) Resource() (Resource, bool) {
	if s.Repository == "" && s.Commit == "" {
		return Resource{}, false
	}
	r := Resource{Name: SourceName}
	if s.Repository != "" {
		r.URI = "git+" + s.Repository
		if s.Ref != "" {
			r.URI += "@" + s.Ref
		}
	}
	if s.Commit != "" {
		r.Digest = map[string]string{"gitCommit": s.Commit}
	}
	return r, true
}

// SourceOf reads the source back from a statement's dependencies.
func SourceOf(st *Statement) (Source, bool) {
	for _, r := range st.Predicate.BuildDefinition.ResolvedDependencies {
		if r.Name != SourceName {
			continue
		}
		var s Source
		s.Commit = r.Digest["gitCommit"]
		if rest, ok := strings.CutPrefix(r.URI, "git+"); ok {
			// A ref is a full ref name (refs/...) after the last @.
			s.Repository = rest
			if i := strings.LastIndex(rest, "@"); i > 0 && strings.HasPrefix(rest[i+1:], "refs/") {
				s.Repository, s.Ref = rest[:i], rest[i+1:]
			}
		}
		return s, true
	}
	return Source{}, false
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// ReadGit reads the git checkout holding dir with the git command: its
// HEAD commit, the ref HEAD points at, and the origin remote's URL
// (without credentials). ok is false when dir is in no checkout, git is
// not installed, or the checkout has no commit.
func ReadGit(ctx context.Context, dir string) (Source, bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		// Nothing the caller's environment says about another repository.
		cmd.Env = append(os.Environ(), "GIT_DIR=", "GIT_WORK_TREE=", "GIT_TERMINAL_PROMPT=0")
		cmd.Env = cleanGitEnv(cmd.Env)
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return string(bytes.TrimSpace(out))
	}
	commit := git("rev-parse", "--verify", "-q", "HEAD^{commit}")
	if !commitRE.MatchString(commit) {
		return Source{}, false
	}
	return Source{Commit: commit, Ref: git("symbolic-ref", "-q", "HEAD"), Repository: cleanURL(git("config", "--get", "remote.origin.url"))}, true
}

// cleanGitEnv drops GIT_DIR and GIT_WORK_TREE (set empty above, which git
// reads as unset only on some versions) from env.
func cleanGitEnv(env []string) []string {
	out := env[:0]
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_DIR=") || strings.HasPrefix(kv, "GIT_WORK_TREE=") || strings.HasPrefix(kv, "GIT_INDEX_FILE=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// --version names the revision (12 hex digits), its time and a dirty work
// tree when the build recorded them, and always the Go version.
func TestBuildInfoString(t *testing.T) {
	for _, tt := range []struct {
		info buildInfo
		want string
	}{
		{buildInfo{Version: "v1.2.0", GoVersion: "go1.26.0"}, "v1.2.0 (go1.26.0)"},
		{buildInfo{Version: "(devel)", Revision: "0123456789abcdef0123", Time: "2026-01-02T03:04:05Z", GoVersion: "go1.26.0"},
			"(devel) (0123456789ab, 2026-01-02T03:04:05Z; go1.26.0)"},
		{buildInfo{Version: "(devel)", Revision: "0123456789abcdef0123", Time: "2026-01-02T03:04:05Z", Dirty: true, GoVersion: "go1.26.0"},
			"(devel) (0123456789ab, 2026-01-02T03:04:05Z, dirty; go1.26.0)"},
	} {
		if got := tt.info.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.info, got, tt.want)
		}
	}
	if info := readBuildInfo(); info.Module != "github.com/cloud-assembly/assemble" && info.Module != "" || info.GoVersion == "" {
		t.Errorf("readBuildInfo: %+v", info)
	}
}

// Issue 23, item 1: the version, commit and date the release script
// stamps in (-ldflags -X) take the place of Go's build information; each
// left empty falls back to it.
func TestStampedVersion(t *testing.T) {
	defer func(v, c, d string) { version, commit, date = v, c, d }(version, commit, date)
	goInfo := readGoBuildInfo()
	version, commit, date = "v1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-01-02T03:04:05Z"
	info := readBuildInfo()
	if info.Version != "v1.2.3" || info.Revision != commit || info.Time != date || info.GoVersion != goInfo.GoVersion {
		t.Errorf("stamped: %+v", info)
	}
	if got, want := info.String(), "v1.2.3 (0123456789ab, 2026-01-02T03:04:05Z"; !strings.HasPrefix(got, want) {
		t.Errorf("--version: %q, want it to start with %q", got, want)
	}
	version, commit, date = "", "", ""
	if info := readBuildInfo(); info != goInfo {
		t.Errorf("not stamped: %+v, want Go's %+v", info, goInfo)
	}
}

// Issue 29, item 9: the manual page has ENVIRONMENT and EXIT STATUS
// (130 among them), and names the JSON schemas by their URL, not by a
// folder of a repository its reader does not have.
func TestManPageSections(t *testing.T) {
	code, stdout, stderr := runArgs("man")
	if code != 0 {
		t.Fatalf("man: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"\n.SH ENVIRONMENT\n", "\n.SH EXIT STATUS\n", "\n.B 130\n", "ASSEMBLE_SIGNING_KEY", jsonDocsURL} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the manual page lacks %q", want)
		}
	}
	if bareDocsJSON.MatchString(stdout) {
		t.Errorf("the manual page names docs/json without its URL")
	}
	// Every section the page refers to ("see FINDINGS") is one it has.
	sections := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\.SH "?([A-Z][A-Z ]*[A-Z])"?$`).FindAllStringSubmatch(stdout, -1) {
		sections[m[1]] = true
	}
	refs := regexp.MustCompile(`\b(?:see|in) ([A-Z]{4,}(?: [A-Z]{4,})*)\b`).FindAllStringSubmatch(stdout, -1)
	if len(refs) == 0 {
		t.Error("the page refers to no section: the check reads nothing")
	}
	for _, m := range refs {
		if !sections[m[1]] {
			t.Errorf("the manual page refers to section %s, which it does not have (it has %v)", m[1], sections)
		}
	}
}

// Issue 29, item 9: -v means one thing: --verbose, on every command that
// has it; the version is --version (and 'assemble version'), and the top
// level has no -v.
func TestVFlagIsVerbose(t *testing.T) {
	app := newApp(nil, nil, nil)
	var withV int
	for _, path := range leafCommands() {
		c := app.Command(path[0])
		for _, name := range path[1:] {
			c = c.Command(name)
		}
		for _, f := range c.Flags {
			if slices.Contains(f.Names(), "v") {
				withV++
				if f.Names()[0] != "verbose" {
					t.Errorf("assemble %s: -v is --%s, want --verbose", strings.Join(path, " "), f.Names()[0])
				}
			}
		}
	}
	if withV < 2 {
		t.Errorf("only %d commands have -v", withV)
	}
	if code, _, stderr := runArgs("-v"); code != 2 || !strings.Contains(stderr, "-v") {
		t.Errorf("assemble -v: exit %d, %s; want a usage error", code, stderr)
	}
	if code, stdout, _ := runArgs("--version"); code != 0 || !strings.HasPrefix(stdout, "assemble version ") {
		t.Errorf("assemble --version: exit %d, %q", code, stdout)
	}
}

// Issue 29, item 9: a build in a checkout reports what the README says:
// the commit's pseudo-version with the commit and its time, and with
// -buildvcs=false "(devel)" and the Go version alone. Both binaries are
// built here (the first only where Go stamps VCS information).
func TestCheckoutBuildVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command twice")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, promise := range []string{"reports the commit's\npseudo-version with the commit and its time", "`-buildvcs=false`", "it reports `(devel)` and the Go\nversion alone"} {
		if !strings.Contains(string(readme), promise) {
			t.Fatalf("README.md no longer says %q: update this test with it", promise)
		}
	}
	if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err != nil {
		t.Skipf("not a git checkout: %v", err)
	} else if len(strings.TrimSpace(string(out))) < 12 {
		t.Skipf("git rev-parse HEAD: %q", out)
	}
	dir := t.TempDir()
	version := func(args ...string) string {
		bin := filepath.Join(dir, "assemble"+strings.Join(args, ""))
		cmd := exec.Command("go", append(append([]string{"build", "-o", bin}, args...), ".")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", args, err, out)
		}
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", bin, err)
		}
		return strings.TrimSpace(string(out))
	}
	goVersion := runtime.Version()
	if got, want := version("-buildvcs=false"), "assemble version (devel) ("+goVersion+")"; got != want {
		t.Errorf("-buildvcs=false: %q, want %q", got, want)
	}
	top, _ := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		// Go stamps the VCS information only where .git is a folder.
		t.Logf("a git worktree (.git is not a folder): the build with VCS information is not checked here")
		return
	}
	head, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	rev := string(head[:12])
	withVCS := regexp.MustCompile(`^assemble version v\d+\.\d+\.\d+(-\S*` + rev + `)?(\+dirty)? \(` + rev + `, \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ(, dirty)?; ` + regexp.QuoteMeta(goVersion) + `\)$`)
	if got := version("-buildvcs=true"); !withVCS.MatchString(got) {
		t.Errorf("go build in the checkout: %q, want the pseudo-version of commit %s (or its tag) with the commit and its time", got, rev)
	}
}

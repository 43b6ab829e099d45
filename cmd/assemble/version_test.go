package main

import (
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
}

package main

import (
	"fmt"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// buildInfo is what `assemble version` reports, from the Go build
// information embedded in the binary.
type buildInfo struct {
	Module    string `json:"module"`
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Dirty     bool   `json:"dirty"`
	GoVersion string `json:"goVersion"`
}

// Set at link time by scripts/release (-ldflags "-X main.version=v1.2.0
// -X main.commit=<sha> -X main.date=<RFC 3339>"); when empty, the build
// information Go records is used (go install module@version records the
// version, a build in a checkout the VCS revision and time).
var (
	version string
	commit  string
	date    string
)

// readBuildInfo is the build information: the version, commit and date
// stamped in by the release script, each falling back to what the Go
// build recorded (readGoBuildInfo).
func readBuildInfo() buildInfo {
	info := readGoBuildInfo()
	if version != "" {
		info.Version = version
	}
	if commit != "" {
		info.Revision = commit
	}
	if date != "" {
		info.Time = date
	}
	return info
}

// readGoBuildInfo reads the module version, VCS revision, commit time and
// dirty flag, and Go version (debug.ReadBuildInfo). A binary built by "go
// build" in a checkout has version "(devel)" and the VCS fields; one built
// by "go install module@version" the version and no VCS fields.
func readGoBuildInfo() buildInfo {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return buildInfo{Module: "github.com/cloud-assembly/assemble", Version: "unknown", GoVersion: "unknown"}
	}
	info := buildInfo{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if info.Version == "" {
		info.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Dirty = s.Value == "true"
		}
	}
	return info
}

// String is the one line of --version: "v1.2.0 (abc1234, 2026-01-02T03:04:05Z, dirty; go1.26.0)".
func (b buildInfo) String() string {
	var extra string
	if b.Revision != "" {
		rev := b.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		extra = rev
		if b.Time != "" {
			extra += ", " + b.Time
		}
		if b.Dirty {
			extra += ", dirty"
		}
		extra += "; "
	}
	return fmt.Sprintf("%s (%s%s)", b.Version, extra, b.GoVersion)
}

func versionString() string { return readBuildInfo().String() }

func versionCmd() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, VCS revision and Go version of this binary",
		Description: `Prints what the binary records about its build: module version, VCS
revision, commit time and whether the work tree had uncommitted changes, and
the Go version. --json prints them as one object.

Example: assemble version --json`,
		Flags: []cli.Flag{jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef("version takes no arguments, got %d", c.NArg())
			}
			info := readBuildInfo()
			if c.Bool("json") {
				return printJSON(c, info)
			}
			fmt.Fprintf(c.App.Writer, "assemble %s\n", info)
			return nil
		},
	}
}

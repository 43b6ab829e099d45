package artifacts

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// zipHeaderFiles are sources of the sizes a Lambda folder holds: a few
// bytes (stored: deflate would add to them), about a hundred (where
// klauspost's level 6 writes a stored block and zlib fixed Huffman codes),
// and more.
var zipHeaderFiles = map[string]string{
	"tiny.txt":    "ok\n",
	"small.py":    "def handler(event, context):\n    return {'statusCode': 200, 'body': 'hello from a small function'}\n",
	"lib/util.py": strings.Repeat("def helper_function(value):\n    return value * 2\n\n", 40),
	"bootstrap":   "#!/bin/sh\nexec ./app\n",
}

// writeTestZip zips zipHeaderFiles as a Lambda folder and writes the zip to
// a file.
func writeTestZip(t *testing.T) (dir, zipPath string) {
	t.Helper()
	dir = t.TempDir()
	write(t, dir, zipHeaderFiles)
	write(t, dir, map[string]string{"template.yaml": "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: src\n"})
	for name, body := range zipHeaderFiles {
		write(t, filepath.Join(dir, "src"), map[string]string{name: body})
	}
	_, s, err := pack(t, dir, Options{Bucket: "bkt"})
	if err != nil {
		t.Fatal(err)
	}
	zipPath = filepath.Join(t.TempDir(), "code.zip")
	if err := os.WriteFile(zipPath, s.Assets()[0].Data(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, zipPath
}

// TestZipHeadersZipinfo: Info-ZIP's zipinfo reads every entry of an
// artifact zip as made by Unix with spec 2.0, needing 2.0 to extract a
// deflated entry and 1.0 a stored one (APPNOTE 4.4.2, 4.4.3; issue 28
// item 7).
func TestZipHeadersZipinfo(t *testing.T) {
	zipinfo, err := exec.LookPath("zipinfo")
	if err != nil {
		t.Skip("zipinfo is not installed (Debian's unzip package; .ci/run installs it)")
	}
	_, zp := writeTestZip(t)
	out, err := exec.Command(zipinfo, "-v", zp).CombinedOutput()
	if err != nil {
		t.Fatalf("zipinfo: %v\n%s", err, out)
	}
	entries := strings.Split(string(out), "Central directory entry #")[1:]
	if len(entries) != len(zipHeaderFiles) {
		t.Fatalf("zipinfo lists %d entries, want %d:\n%s", len(entries), len(zipHeaderFiles), out)
	}
	field := func(e, name string) string {
		m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(name) + `:\s+(.*)$`).FindStringSubmatch(e)
		if m == nil {
			t.Fatalf("zipinfo shows no %q:\n%s", name, e)
		}
		return strings.TrimSpace(m[1])
	}
	for _, e := range entries {
		if got := field(e, "file system or operating system of origin"); got != "Unix" {
			t.Errorf("origin %q, want Unix:\n%s", got, e)
		}
		if got := field(e, "version of encoding software"); got != "2.0" {
			t.Errorf("version of encoding software %q, want 2.0:\n%s", got, e)
		}
		method := field(e, "compression method")
		need := field(e, "minimum software version required to extract")
		switch {
		case strings.HasPrefix(method, "deflated") && need != "2.0",
			method == "none (stored)" && need != "1.0":
			t.Errorf("%s entry needs version %s to extract", method, need)
		}
	}
}

// TestZipHeadersPython: Python's zipfile (aws-cli's zip writer) reads the
// same fields, no entry is larger than its file (stored when deflate does
// not save bytes), and the entries take about what zlib's level 6 makes of
// them (issue 28 item 7).
func TestZipHeadersPython(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	dir, zp := writeTestZip(t)
	const script = `
import json, sys, zipfile, zlib, os
z = zipfile.ZipFile(sys.argv[1])
out = []
for i in z.infolist():
    data = open(os.path.join(sys.argv[2], i.filename), 'rb').read()
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    out.append(dict(name=i.filename, system=i.create_system, made=i.create_version, need=i.extract_version,
        method=i.compress_type, csize=i.compress_size, size=i.file_size, zlib=len(c.compress(data) + c.flush()),
        ok=z.read(i.filename) == data))
print(json.dumps(out))
`
	out, err := exec.Command(python, "-c", script, zp, filepath.Join(dir, "src")).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var entries []struct {
		Name                       string
		System, Made, Need, Method int
		CSize, Size, Zlib          int
		OK                         bool
	}
	if err := json.Unmarshal(out, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(zipHeaderFiles) {
		t.Fatalf("%d entries, want %d", len(entries), len(zipHeaderFiles))
	}
	stored, ours, zlibs := 0, 0, 0
	for _, e := range entries {
		if !e.OK {
			t.Errorf("%s: zipfile reads other bytes", e.Name)
		}
		if e.System != 3 || e.Made != 20 {
			t.Errorf("%s: made by system %d version %d, want 3 (Unix) and 20", e.Name, e.System, e.Made)
		}
		switch e.Method {
		case 8:
			if e.Need != 20 {
				t.Errorf("%s: deflated, needs version %d to extract, want 20", e.Name, e.Need)
			}
		case 0:
			stored++
			if e.Need != 10 {
				t.Errorf("%s: stored, needs version %d to extract, want 10", e.Name, e.Need)
			}
		default:
			t.Errorf("%s: method %d", e.Name, e.Method)
		}
		if e.CSize > e.Size {
			t.Errorf("%s: %d bytes in the zip for %d: store it", e.Name, e.CSize, e.Size)
		}
		ours += e.CSize
		zlibs += min(e.Zlib, e.Size)
	}
	// On main, with a stored block for small.py and deflate for tiny.txt,
	// these sources took 18% more than zlib's level 6 gives.
	if float64(ours) > float64(zlibs)*1.02 {
		t.Errorf("entries take %d bytes, zlib's level 6 (stored when larger) %d: more than 2%% over", ours, zlibs)
	}
	t.Logf("entries take %d bytes; zlib level 6 (stored when larger) %d", ours, zlibs)
	if stored == 0 {
		t.Errorf("no entry stored: tiny.txt deflates to more than its 3 bytes")
	}
}

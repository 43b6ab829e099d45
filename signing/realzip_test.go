package signing

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
)

// realProject is the project folder the real ZIP writers archive: nested
// folders (so directory entries), a non-ASCII name, binary content, and a
// manifest whose droplets name a file and a folder, so that Verify's
// assembly check finds them through the tools' directory entries.
var realProject = map[string]string{
	"manifest.json": `{"schema":"cloud-assembly/1.0","droplets":{` +
		`"App":{"type":"npm://@aws-cdk/aws-cloudformation.StackDroplet","environment":"aws://123456789012/eu-west-1",` +
		`"properties":{"stackName":"app","template":"stacks/app.yaml","parameters":{"Assets":"${Assets.bucketName}"}}},` +
		`"Assets":{"type":"npm://@aws-cdk/assets.DirectoryDroplet","environment":"aws://123456789012/eu-west-1",` +
		`"properties":{"directory":"assets","bucketName":"b"}}}}`,
	"stacks/app.yaml":       "Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n",
	"stacks/nested/net.yml": strings.Repeat("# network\n", 300),
	"assets/caf\u00e9.txt":  "caf\u00e9\n",
	"assets/blob.bin":       string(bytes.Repeat([]byte{0, 1, 2, 254, 255, 7}, 2000)),
}

func writeProject(t *testing.T, project map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range project {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// pythonZip writes the project with Python's zipfile: writestr, which
// gives files mode 0600 with no file-type bits, and mkdir for folders,
// with the mode given (its default, 0777, makes a world-writable folder).
const pythonZip = `
import os, sys, zipfile
src, out, mode = sys.argv[1], sys.argv[2], int(sys.argv[3], 8)
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for root, dirs, files in sorted(os.walk(src)):
        rel = os.path.relpath(root, src)
        if rel != "." and hasattr(z, "mkdir"):
            z.mkdir(rel.replace(os.sep, "/"), mode)
        for f in sorted(files):
            name = os.path.relpath(os.path.join(root, f), src).replace(os.sep, "/")
            with open(os.path.join(root, f), "rb") as fh:
                z.writestr(name, fh.read())
`

// pythonZip64 writes the project with Python's zipfile as its documentation
// says to write a stream of unknown size (ZipFile.open(name, "w",
// force_zip64=True)): zip64 sizes in every local header, whatever the size.
// With "stream" it writes to a pipe-like file that cannot seek, so each
// entry ends in a zip64 data descriptor (8-byte sizes).
const pythonZip64 = `
import io, os, sys, zipfile
src, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
class Stream(io.RawIOBase):
    def __init__(self, f): self.f = f
    def writable(self): return True
    def write(self, b): return self.f.write(b)
with open(out, "wb") as raw:
    with zipfile.ZipFile(Stream(raw) if mode == "stream" else raw, "w", zipfile.ZIP_DEFLATED) as z:
        for root, dirs, files in sorted(os.walk(src)):
            for f in sorted(files):
                name = os.path.relpath(os.path.join(root, f), src).replace(os.sep, "/")
                with open(os.path.join(root, f), "rb") as fh, z.open(name, "w", force_zip64=True) as w:
                    w.write(fh.read())
`

// Real ZIP writers (issue #11): an archive made by each stock tool is a valid
// assembly; we sign it, we verify it, gpg verifies its signature, and
// `unzip -t` accepts the signed archive. A test skips, saying why, when its
// tool is absent (.ci/run installs zip, unzip and 7zip). Issue 19: what a
// tool writes that readers disagree on is refused, saying so: Info-ZIP zip
// (3.0, Debian) writes a non-ASCII name with neither the UTF-8 flag nor a
// Unicode Path field, and Python's ZipFile.mkdir makes a world-writable
// folder by default (mode 0777); those tools' archives verify without them.
func TestRealZipWriters(t *testing.T) {
	tools := []struct {
		name   string
		tools  []string // any of these executables
		make   func(t *testing.T, tool, src, out string) error
		extra  []string // files the tool adds
		dirs   bool     // writes directory entries
		refuse string   // the archive of the whole project is refused, naming this
		ascii  bool     // then the project without its non-ASCII name is written
	}{
		{"info-zip", []string{"zip"}, func(t *testing.T, tool, src, out string) error {
			return run(src, tool, "-q", "-r", out, ".")
		}, nil, true, "without the UTF-8 flag", true},
		{"python-zipfile-mkdir-default", []string{"python3"}, func(t *testing.T, tool, src, out string) error {
			if err := run(src, tool, "-c", "import zipfile, sys; sys.exit(not hasattr(zipfile.ZipFile, 'mkdir'))"); err != nil {
				t.Skip("this Python's zipfile has no mkdir (3.11 added it)")
			}
			return run(src, tool, "-c", pythonZip, src, out, "777")
		}, nil, true, "world-writable", false},
		{"python-zipfile", []string{"python3"}, func(t *testing.T, tool, src, out string) error {
			return run(src, tool, "-c", pythonZip, src, out, "755")
		}, nil, false, "", false},
		// zip -fz and Python's force_zip64 write zip64 records and fields
		// for small files too (APPNOTE 4.3.9.1: "ZIP64 format MAY be used
		// regardless of the size of a file"); zip to standard output
		// through a pipe writes data descriptors.
		{"info-zip-zip64", []string{"zip"}, func(t *testing.T, tool, src, out string) error {
			return run(src, tool, "-q", "-r", "-fz", out, ".")
		}, nil, true, "without the UTF-8 flag", true},
		{"info-zip-stdout", []string{"zip"}, func(t *testing.T, tool, src, out string) error {
			return run(src, "sh", "-c", `"$0" -q -r - . | cat > "$1"`, tool, out)
		}, nil, true, "without the UTF-8 flag", true},
		{"python-zipfile-zip64", []string{"python3"}, func(t *testing.T, tool, src, out string) error {
			return run(src, tool, "-c", pythonZip64, src, out, "seek")
		}, nil, false, "", false},
		{"python-zipfile-zip64-stream", []string{"python3"}, func(t *testing.T, tool, src, out string) error {
			return run(src, tool, "-c", pythonZip64, src, out, "stream")
		}, nil, false, "", false},
		{"go-archive-zip", nil, func(t *testing.T, _, src, out string) error {
			return goArchiveZip(src, out)
		}, nil, true, "", false},
		{"7-zip", []string{"7zz", "7z", "7za"}, func(t *testing.T, tool, src, out string) error {
			return run(src, tool, "a", "-tzip", "-bd", "-bso0", out, ".")
		}, nil, true, "", false},
		{"jar", []string{"jar"}, func(t *testing.T, tool, src, out string) error {
			return run(src, tool, "cf", out, "-C", src, ".")
		}, []string{"META-INF/MANIFEST.MF"}, true, "", false},
	}
	home := gpgHome(t)
	e := signer(t, "ed25519.sec.asc")
	trusted := readKeys(t, "trusted.asc")
	for _, tt := range tools {
		t.Run(tt.name, func(t *testing.T) {
			tool := ""
			for _, name := range tt.tools {
				if p, err := exec.LookPath(name); err == nil {
					tool = p
					break
				}
			}
			if len(tt.tools) > 0 && tool == "" {
				t.Skipf("%s not installed (.ci/run installs it)", strings.Join(tt.tools, " or "))
			}
			project := realProject
			src := writeProject(t, project)
			out := filepath.Join(t.TempDir(), "app.cloud")
			if err := tt.make(t, tool, src, out); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if tt.refuse != "" {
				_, err := assembly.Open(out)
				if !errors.Is(err, assembly.ErrFormat) || !strings.Contains(err.Error(), tt.refuse) {
					t.Fatalf("a %s archive: got %v, want assembly.ErrFormat saying %q", tt.name, err, tt.refuse)
				}
				if !tt.ascii {
					return
				}
				project = maps.Clone(realProject)
				for name := range project {
					if strings.ContainsFunc(name, func(r rune) bool { return r >= 0x80 }) {
						delete(project, name)
					}
				}
				src = writeProject(t, project)
				out = filepath.Join(t.TempDir(), "app.cloud")
				if err := tt.make(t, tool, src, out); err != nil {
					t.Fatalf("%s: %v", tt.name, err)
				}
			}
			rc, err := assembly.Open(out)
			if err != nil {
				t.Fatalf("a %s archive is refused: %v", tt.name, err)
			}
			want := slices.Sorted(maps.Keys(project))
			want = slices.Sorted(slices.Values(append(want, tt.extra...)))
			var got []string
			for _, f := range rc.Files() {
				got = append(got, f.Name())
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("files %q, want %q", got, want)
			}
			if tt.dirs && len(rc.Dirs()) == 0 {
				t.Errorf("no directory entries read; the test means to cover them")
			}
			rc.Close()

			now := time.Now().UTC().Truncate(time.Second)
			if _, err := SealFile(context.Background(), out, out, []Signer{Keys(e)}, &SignOptions{Now: func() time.Time { return now }}); err != nil {
				t.Fatalf("sign: %v", err)
			}
			signed, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			v, err := Verify(context.Background(), reader(t, signed), trusted, nil)
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			for name, body := range project {
				b, err := v.ReadFile(name)
				if err != nil || string(b) != body {
					t.Errorf("%s: %d bytes, %v", name, len(b), err)
				}
			}
			if err := gpgVerify(t, home, signatureOf(t, signed)); err != nil {
				t.Errorf("gpg --verify: %v", err)
			}
			if _, err := exec.LookPath("unzip"); err == nil {
				if err := run("", "unzip", "-tq", out); err != nil {
					t.Errorf("unzip -t on the signed archive: %v", err)
				}
			}
		})
	}
}

// goArchiveZip writes the project with the standard library's archive/zip,
// with a directory entry before each folder's files.
func goArchiveZip(src, out string) error {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == src {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		name := filepath.ToSlash(rel)
		if d.IsDir() {
			_, err := zw.Create(name + "/")
			return err
		}
		w, err := zw.Create(name)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
	if err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// run runs a command in dir; the error carries its output.
func run(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return &runError{err, strings.TrimSpace(string(out))}
	}
	return nil
}

type runError struct {
	err error
	out string
}

func (e *runError) Error() string { return e.err.Error() + ": " + e.out }

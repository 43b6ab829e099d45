package cfn

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn/source"
)

// openFiles counts this process's open file descriptors (Linux only).
func openFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	return len(ents)
}

// TestPackageClosesRoot: Package opens the project folder (an os.Root) for
// each run and closes it again, so many runs do not run out of descriptors.
func TestPackageClosesRoot(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/fd")
	}
	dir := t.TempDir()
	files := map[string]string{
		"template.yaml": "Modules:\n  M:\n    Source: m.yaml\n",
		"m.yaml":        "Resources:\n  B:\n    Type: AWS::S3::Bucket\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := openFiles(t)
	for i := 0; i < 200; i++ {
		if _, err := Package(filepath.Join(dir, "template.yaml"), Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if after := openFiles(t); after > before+10 {
		t.Errorf("%d descriptors open after 200 runs, %d before: Package leaks one per run", after, before)
	}
}

// TestSizeLimit: the loader and the parser share one template size limit,
// so a file of exactly MaxFileBytes packages and one byte more is
// ErrTooLarge, whichever of the two sees it first.
func TestSizeLimit(t *testing.T) {
	dir := t.TempDir()
	head := "Resources:\n  B:\n    Type: AWS::S3::Bucket\n#"
	for _, tc := range []struct {
		size int
		want error
	}{
		{MaxFileBytes, nil}, {source.DefaultMaxFileSize, nil},
		{MaxFileBytes + 1, ErrTooLarge}, {source.DefaultMaxFileSize + 1, ErrTooLarge},
	} {
		body := head + strings.Repeat("x", tc.size-len(head)-1) + "\n"
		p := filepath.Join(dir, "template.yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Package(p, Options{})
		if !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
			t.Errorf("%d bytes: err = %v, want %v", tc.size, err, tc.want)
		}
		if _, err := Parse("t.yaml", []byte(body)); !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
			t.Errorf("Parse of %d bytes: err = %v, want %v", tc.size, err, tc.want)
		}
	}
}

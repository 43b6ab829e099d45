package trust

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/quick"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/signing"
)

// openSigned opens a file holding b with the ed25519 test key trusted.
func openSigned(t *testing.T, b []byte) (*Assembly, string) {
	t.Helper()
	p := writeFile(t, b)
	a, err := Open(context.Background(), p, load(t, Options{Keyrings: []string{filepath.Join(keysDir, "ed25519.pub.asc")}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, p
}

// tree lists the files under dir, slash paths to contents.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Extract writes every file (signature.asc too) and reports what
// extract --json prints.
func TestExtract(t *testing.T) {
	a, p := openSigned(t, signedAssembly(t))
	dir := filepath.Join(t.TempDir(), "out")
	var last, total int64
	res, err := a.Extract(context.Background(), dir, &ExtractOptions{Progress: func(done, all int64) { last, total = done, all }})
	if err != nil {
		t.Fatal(err)
	}
	got := tree(t, dir)
	if len(got) != 3 || got["site/index.html"] != "<h1>hello</h1>\n" || !strings.Contains(got[assembly.SignatureName], "BEGIN PGP SIGNED MESSAGE") {
		t.Fatalf("wrote %v", got)
	}
	if res.File != p || res.Dir != dir || res.CDKOut || res.Files != 2 || res.Bytes != a.Result().Bytes() || !res.Authenticated || res.Signer == nil || res.SHA256 != a.Digest() {
		t.Errorf("result %+v", res)
	}
	if last != total || total == 0 {
		t.Errorf("progress %d of %d", last, total)
	}
	validJSON(t, verifySchema(t, "extract.json"), res, nil)
	if fi, err := os.Stat(filepath.Join(dir, "site", "index.html")); err != nil || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
}

// A folder that holds something is refused (output.ErrNotEmpty, code
// folder_not_empty) and left as it was; CheckExtractDir says so before
// anything is verified.
func TestExtractRefusesFullFolder(t *testing.T) {
	a, _ := openSigned(t, signedAssembly(t))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckExtractDir(dir); !errors.Is(err, output.ErrNotEmpty) {
		t.Errorf("CheckExtractDir: %v", err)
	}
	if _, err := a.Extract(context.Background(), dir, nil); !errors.Is(err, output.ErrNotEmpty) {
		t.Errorf("Extract: %v", err)
	}
	if got := tree(t, dir); len(got) != 1 || got["keep"] != "mine" {
		t.Errorf("the folder changed: %v", got)
	}
	if err := CheckExtractDir(filepath.Join(t.TempDir(), "new")); err != nil {
		t.Errorf("a new folder: %v", err)
	}
	if err := CheckExtractDir(filepath.Join(t.TempDir(), "no", "such")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("in a missing folder: %v", err)
	}
}

// The bytes written are the bytes verified: a file changed after Open
// fails Extract with signing's (or the archive's) sentinel, and nothing
// is written.
func TestExtractChangedAfterVerification(t *testing.T) {
	b := signedAssembly(t)
	a, p := openSigned(t, b)
	start := dataOffset(t, b, "site/index.html")
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{b[start] ^ 0x55}, start)
	f.Close()
	dir := filepath.Join(t.TempDir(), "out")
	_, err = a.Extract(context.Background(), dir, nil)
	if !errors.Is(err, signing.ErrVerification) && !errors.Is(err, assembly.ErrCorrupt) {
		t.Errorf("Extract after a change: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "site/index.html: ") {
		t.Errorf("the error does not name the file: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed extract wrote %s: %v", dir, err)
	}
}

// A Layout places files (executable ones 0755); its refusal is a
// LayoutError carrying its cause; a place outside the folder is refused
// by the folder's root, and nothing is written.
func TestExtractLayout(t *testing.T) {
	a, _ := openSigned(t, signedAssembly(t))
	dir := filepath.Join(t.TempDir(), "out")
	layout := func(m *assembly.Manifest, names []string) ([]assembly.Placement, error) {
		if m == nil || len(names) != 3 {
			t.Errorf("layout got %v", names)
		}
		return []assembly.Placement{{Name: "site/index.html", Path: "www/index.html", Executable: true}}, nil
	}
	res, err := a.Extract(context.Background(), dir, &ExtractOptions{Layout: layout})
	if err != nil {
		t.Fatal(err)
	}
	if got := tree(t, dir); len(got) != 1 || got["www/index.html"] != "<h1>hello</h1>\n" {
		t.Errorf("wrote %v", got)
	}
	if fi, err := os.Stat(filepath.Join(dir, "www", "index.html")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("not executable: %v, %v", fi.Mode(), err)
	}
	if !res.CDKOut || res.Files != 1 || res.Bytes != 15 {
		t.Errorf("result %+v", res)
	}

	notBuilt := errors.New("not built from one")
	_, err = a.Extract(context.Background(), filepath.Join(t.TempDir(), "x"), &ExtractOptions{Layout: func(*assembly.Manifest, []string) ([]assembly.Placement, error) {
		return nil, notBuilt
	}})
	var le *LayoutError
	if !errors.As(err, &le) || !errors.Is(err, notBuilt) {
		t.Errorf("a layout's refusal: %v", err)
	}
	_, err = a.Extract(context.Background(), filepath.Join(t.TempDir(), "x"), &ExtractOptions{Layout: func(*assembly.Manifest, []string) ([]assembly.Placement, error) {
		return []assembly.Placement{{Name: "nosuch", Path: "nosuch"}}, nil
	}})
	if !errors.As(err, &le) || !errors.Is(err, errNotInAssembly) {
		t.Errorf("a layout naming no file: %v", err)
	}
}

// Property: whatever path a layout names, Extract writes inside the
// folder or fails and writes nothing; nothing appears outside it.
func TestExtractStaysInside(t *testing.T) {
	a, _ := openSigned(t, signedAssembly(t))
	parent := t.TempDir()
	check := func(parts []uint8) bool {
		segs := []string{"..", ".", "a", "b", "/", "..."}
		var p []string
		for _, x := range parts {
			p = append(p, segs[int(x)%len(segs)])
		}
		place := strings.Join(p, "/")
		if place == "" {
			place = "."
		}
		dir := filepath.Join(parent, "out")
		_, err := a.Extract(context.Background(), dir, &ExtractOptions{Layout: func(*assembly.Manifest, []string) ([]assembly.Placement, error) {
			return []assembly.Placement{{Name: "site/index.html", Path: place}}, nil
		}})
		entries, _ := os.ReadDir(parent)
		defer os.RemoveAll(dir)
		if err != nil {
			return len(entries) == 0
		}
		return len(entries) == 1 && entries[0].Name() == "out" && len(tree(t, dir)) == 1
	}
	if err := quick.Check(check, &quick.Config{MaxCount: 200}); err != nil {
		t.Error(err)
	}
}

// An unsigned assembly accepted with the opt-out extracts, not
// authenticated, with no signer.
func TestExtractUnsigned(t *testing.T) {
	p := writeFile(t, unsignedAssembly(t))
	a, err := Open(context.Background(), p, nil, &OpenOptions{InsecureAllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dir := filepath.Join(t.TempDir(), "out")
	res, err := a.Extract(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Authenticated || res.Signer != nil || res.Files != 2 || len(tree(t, dir)) != 2 {
		t.Errorf("result %+v", res)
	}
	validJSON(t, verifySchema(t, "extract.json"), res, nil)
}

// A cancelled context stops Extract, and nothing is written.
func TestExtractCancelled(t *testing.T) {
	a, _ := openSigned(t, signedAssembly(t))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := a.Extract(ctx, dir, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("wrote %s", dir)
	}
}

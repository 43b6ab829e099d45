package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/signing"
)

// Issue #11 defect 3, the property: in a small signed assembly, every single
// byte outside signature.asc, flipped in turn (all bits, then single bits),
// either makes verification fail or changes nothing that `inspect --json`
// reports or `extract` writes (names, content, modes); and what verifies,
// `unzip -t` accepts. Issue 19: every value of the host, flag and external
// attribute bytes too, and what verifies unzip extracts as regular files
// and plain folders only.
func TestByteFlipsFailOrChangeNothing(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.cloud")
	w := assembly.NewWriter(assembly.WriterOptions{})
	for name, body := range map[string]string{
		"manifest.json":     `{"schema":"cloud-assembly/1.0","droplets":{"Site":{"type":"npm://@aws-cdk/assets.FileDroplet","environment":"aws://123456789012/eu-west-1","properties":{"file":"assets/index.html","bucketName":"b","objectKey":"k"}}}}`,
		"assets/index.html": strings.Repeat("<p>hello</p>\n", 20),
		"stacks/empty.txt":  "",
	} {
		if err := w.AddBytes(name, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join("..", "..", "fixtures", "keys", "ed25519.sec.asc"), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	opts := &signing.SignOptions{Now: func() time.Time { return now }, Rand: rand.New(rand.NewSource(1))}
	if _, err := signing.SealFile(context.Background(), good, good, signers, opts); err != nil {
		t.Fatal(err)
	}
	trusted := readFixtureKeys(t, "trusted.asc")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := assembly.NewReader(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	sigStart, sigEnd := entrySpan(t, b, assembly.SignatureName)

	flipped := filepath.Join(dir, "app.cloud")
	observe := func(data []byte) (string, map[string]string) {
		t.Helper()
		if err := os.WriteFile(flipped, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		if code := runJSON(t, []string{"assemble", "inspect", "--json", flipped}, &out, &errb); code != 0 {
			return fmt.Sprintf("inspect failed: %s", errb.String()), nil
		}
		dst := filepath.Join(dir, fmt.Sprintf("out%d", time.Now().UnixNano()))
		if code := run(context.Background(), []string{"assemble", "extract", "--keyring", filepath.Join("..", "..", "fixtures", "keys", "trusted.asc"), "-d", dst, flipped}, nil, &bytes.Buffer{}, &errb); code != 0 {
			return out.String(), map[string]string{"extract failed": errb.String()}
		}
		defer os.RemoveAll(dst)
		return out.String(), tree(t, dst)
	}
	wantInspect, wantTree := observe(b)
	if wantTree == nil || len(wantTree) != 7 {
		t.Fatalf("the unflipped assembly: %s %v", wantInspect, wantTree)
	}
	_, unzipErr := exec.LookPath("unzip")

	flips, accepted := 0, 0
	// try checks one changed copy c of the assembly (what says how it was
	// changed): refused, or nothing observable changed; with extract, what
	// unzip makes of it holds only regular files and plain folders.
	try := func(c []byte, what string, extract bool) {
		flips++
		r, err := assembly.NewReader(bytes.NewReader(c), int64(len(c)))
		if err != nil {
			return
		}
		if _, err := signing.Verify(context.Background(), r, trusted, nil); err != nil {
			return
		}
		accepted++
		gotInspect, gotTree := observe(c)
		if gotInspect != wantInspect {
			t.Errorf("%s verifies but changes inspect --json:\n%s\nwant\n%s", what, gotInspect, wantInspect)
		}
		if fmt.Sprint(gotTree) != fmt.Sprint(wantTree) {
			t.Errorf("%s verifies but changes what extract writes: %v, want %v", what, gotTree, wantTree)
		}
		if unzipErr != nil {
			return
		}
		if !extract {
			if out, err := exec.Command("unzip", "-tq", flipped).CombinedOutput(); err != nil {
				t.Errorf("%s verifies but unzip -t fails: %v\n%s", what, err, out)
			}
			return
		}
		dst := t.TempDir()
		if out, err := exec.Command("sh", "-c", `umask 022 && exec unzip -qqoK "$0" -d "$1"`, flipped, dst).CombinedOutput(); err != nil {
			t.Errorf("%s verifies but unzip fails: %v\n%s", what, err, out)
		}
		filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := os.Lstat(p)
			if err != nil {
				return err
			}
			if m := info.Mode(); !(m.IsRegular() || m.IsDir()) || m&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 || m.Perm()&0o002 != 0 {
				t.Errorf("%s verifies but unzip makes %s %v", what, p, m)
			}
			return nil
		})
	}
	for _, mask := range []byte{0xff, 0x01, 0x80, 0x10} {
		for i := range b {
			if sigStart <= i && i < sigEnd {
				continue
			}
			c := append([]byte{}, b...)
			c[i] ^= mask
			try(c, fmt.Sprintf("byte %d ^ %#02x", i, mask), false)
		}
	}
	// Issue 19: every value of the bytes that say what an entry is and how
	// its name is read, and unzip (run with -K) extracts only regular files
	// and plain folders from what verifies: in the first central header,
	// the "made by" host, the flags and the four bytes of external
	// attributes, and its local header's flags; in the others (the rule
	// does not depend on the entry), the flags, the attributes' type byte
	// and the local flags.
	cdStart := int(binary.LittleEndian.Uint32(b[len(b)-6:]))
	first := true
	for p := cdStart; p+46 <= len(b) && binary.LittleEndian.Uint32(b[p:]) == 0x02014b50; {
		n := 46 + int(binary.LittleEndian.Uint16(b[p+28:])) + int(binary.LittleEndian.Uint16(b[p+30:])) + int(binary.LittleEndian.Uint16(b[p+32:]))
		local := int(binary.LittleEndian.Uint32(b[p+42:]))
		if local == sigStart {
			p += n
			continue
		}
		at := []int{p + 8, p + 9, p + 41, local + 6, local + 7}
		if first {
			at = append(at, p+5, p+38, p+39, p+40)
			first = false
		}
		for _, at := range at {
			for v := 0; v < 256; v++ {
				if byte(v) == b[at] {
					continue
				}
				c := append([]byte{}, b...)
				c[at] = byte(v)
				try(c, fmt.Sprintf("byte %d = %#02x", at, v), true)
			}
		}
		p += n
	}
	t.Logf("%d flips, %d verified and changed nothing", flips, accepted)
	if flips < 2000 {
		t.Fatalf("only %d flips: the assembly is too small for the property", flips)
	}
}

// tree maps each file under dir to its mode and content, and each folder
// (dir itself as "./") to its mode.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			out[filepath.ToSlash(rel)+"/"] = info.Mode().String()
			return nil
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = fmt.Sprintf("%v %q", info.Mode(), body)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// entrySpan is where the entry name lies in the archive b, local header to
// the end of its data, as its central record says (a stored entry with no
// data descriptor, as sign writes signature.asc).
func entrySpan(t *testing.T, b []byte, name string) (start, end int) {
	t.Helper()
	le16 := func(p int) int { return int(binary.LittleEndian.Uint16(b[p:])) }
	le32 := func(p int) int { return int(binary.LittleEndian.Uint32(b[p:])) }
	for p := le32(len(b) - 6); p+46 <= len(b) && le32(p) == 0x02014b50; p += 46 + le16(p+28) + le16(p+30) + le16(p+32) {
		if string(b[p+46:p+46+le16(p+28)]) == name {
			local := le32(p + 42)
			return local, local + 30 + le16(local+26) + le16(local+28) + le32(p+20)
		}
	}
	t.Fatalf("no central record for %s", name)
	return 0, 0
}

package signing

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/output"
)

// verifyFile verifies the assembly file name against trusted keys.
func verifyFile(t *testing.T, name string, trusted openpgp.EntityList) *Verified {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Verify(context.Background(), reader(t, b), trusted, nil)
	if err != nil {
		t.Fatalf("verify %s: %v", name, err)
	}
	return v
}

// Progress counts every content byte once, in order, and ends at the
// total, for sign and for verify.
func TestProgress(t *testing.T) {
	b := buildZip(t)
	var want int64
	for _, f := range testFiles {
		want += int64(len(f.body))
	}
	check := func(what string, calls []int64, total int64) {
		t.Helper()
		if len(calls) == 0 || calls[len(calls)-1] != want || total != want {
			t.Errorf("%s: progress %v of %d, want to end at %d", what, calls, total, want)
		}
		for i := 1; i < len(calls); i++ {
			if calls[i] < calls[i-1] {
				t.Errorf("%s: progress went back: %v", what, calls)
			}
		}
	}
	var calls []int64
	var total int64
	rec := func(done, tot int64) { calls = append(calls, done); total = tot }
	var out bytes.Buffer
	if _, err := Seal(context.Background(), &out, reader(t, b), []Signer{Keys(signer(t, "ed25519.sec.asc"))}, &SignOptions{Progress: rec}); err != nil {
		t.Fatal(err)
	}
	check("sign", calls, total)
	calls = nil
	if _, err := Verify(context.Background(), reader(t, out.Bytes()), readKeys(t, "trusted.asc"), &VerifyOptions{Progress: rec}); err != nil {
		t.Fatal(err)
	}
	check("verify", calls, total)
}

// A link to an assembly: its target is signed, the link kept.
func TestSignFileSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "app.cloud")
	os.WriteFile(target, buildZip(t), 0o640)
	link := filepath.Join(dir, "current.cloud")
	os.Symlink("app.cloud", link)
	if _, err := SealFile(context.Background(), link, link, []Signer{Keys(signer(t, "ed25519.sec.asc"))}, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := os.Readlink(link); err != nil || got != "app.cloud" {
		t.Fatalf("link now %q (%v)", got, err)
	}
	verifyFile(t, target, readKeys(t, "trusted.asc"))
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v not kept", st.Mode().Perm())
	}
}

// An output that is a folder is refused with output.ErrFolder, and
// nothing is left behind.
func TestSignFileToFolder(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "app.cloud")
	os.WriteFile(in, buildZip(t), 0o644)
	_, err := SealFile(context.Background(), in, dir, []Signer{Keys(signer(t, "ed25519.sec.asc"))}, nil)
	if !errors.Is(err, output.ErrFolder) {
		t.Fatalf("got %v, want output.ErrFolder", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left %v", ents)
	}
}

// A program that writes the assembly, or renames another file over it,
// while it is being signed makes sign fail with ErrInputChanged, leaving
// the file as that program left it.
func TestSignFileInputChanged(t *testing.T) {
	for _, how := range []string{"write", "rename"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "app.cloud")
			orig := buildZip(t)
			os.WriteFile(in, orig, 0o644)
			var once sync.Once
			opts := &SignOptions{Progress: func(done, total int64) {
				once.Do(func() {
					switch how {
					case "write": // as `cat other >> app.cloud` would
						f, _ := os.OpenFile(in, os.O_WRONLY|os.O_APPEND, 0)
						f.Write([]byte("appended"))
						f.Close()
						// The same second on a coarse clock: size tells.
					case "rename": // as `cp other tmp && mv tmp app.cloud`
						other := filepath.Join(dir, "other")
						os.WriteFile(other, orig, 0o644)
						os.Rename(other, in)
					}
				})
			}}
			_, err := SealFile(context.Background(), in, in, []Signer{Keys(signer(t, "ed25519.sec.asc"))}, opts)
			if !errors.Is(err, ErrInputChanged) {
				t.Fatalf("got %v, want ErrInputChanged", err)
			}
			b, _ := os.ReadFile(in)
			if r := reader(t, bytes.TrimSuffix(b, []byte("appended"))); r.Signed() {
				t.Error("the changed file was signed over")
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("left %d files, want app.cloud alone", len(ents))
			}
		})
	}
}

// Two signs of one file never both work from the same original: the
// second waits for the first's lock and signs what the first wrote.
// Before the lock, both hashed the original at once and the last rename
// silently dropped the other's result.
func TestSignFileConcurrent(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "app.cloud")
	os.WriteFile(in, buildZip(t), 0o644)
	aStarted, aGo := make(chan struct{}), make(chan struct{})
	var aOnce, bOnce sync.Once
	bStarted := make(chan struct{})
	var aDone time.Time
	var mu sync.Mutex
	optsA := &SignOptions{Progress: func(done, total int64) {
		aOnce.Do(func() { close(aStarted); <-aGo })
	}}
	optsB := &SignOptions{Replace: true, Progress: func(done, total int64) {
		bOnce.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if aDone.IsZero() {
				t.Error("the second sign hashed while the first was still signing")
			}
			close(bStarted)
		})
	}}
	errs := make(chan error, 2)
	go func() {
		_, err := SealFile(context.Background(), in, in, []Signer{Keys(signer(t, "ed25519.sec.asc"))}, optsA)
		mu.Lock()
		aDone = time.Now()
		mu.Unlock()
		errs <- err
	}()
	<-aStarted
	go func() {
		_, err := SealFile(context.Background(), in, in, []Signer{Keys(signer(t, "rsa3072.sec.asc"))}, optsB)
		errs <- err
	}()
	select {
	case <-bStarted:
		t.Fatal("the second sign did not wait")
	case <-time.After(200 * time.Millisecond):
	}
	close(aGo)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	v := verifyFile(t, in, readKeys(t, "trusted.asc"))
	want := signer(t, "rsa3072.sec.asc")
	if v.Fingerprint() != fingerprint(want) {
		t.Errorf("final signature by %s, want the second signer %s", v.Fingerprint(), fingerprint(want))
	}
}

// Sign racing build on one file: whichever writes first, the other waits,
// and the result is what running them one after the other gives; sign never
// says "signed" over a file that the build then loses, or the reverse.
func TestSignRacingBuild(t *testing.T) {
	trusted := readKeys(t, "trusted.asc")
	newBuild := func(body string, open func() (io.ReadCloser, error)) *assembly.Writer {
		w := assembly.NewWriter(assembly.WriterOptions{})
		w.AddBytes(assembly.ManifestName, []byte(`{"schema":"cloud-assembly/1.0","droplets":{}}`))
		if open == nil {
			open = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
		}
		w.AddOpener("v.txt", int64(len(body)), open)
		return w
	}
	content := func(name string) string {
		b, _ := os.ReadFile(name)
		f := reader(t, b).File("v.txt")
		rc, _ := f.Open()
		defer rc.Close()
		c, _ := io.ReadAll(rc)
		return string(c)
	}
	ctx := context.Background()

	t.Run("sign first", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "app.cloud")
		if err := newBuild("v1", nil).WriteFile(ctx, out); err != nil {
			t.Fatal(err)
		}
		started, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		signed := make(chan error)
		go func() {
			_, err := SealFile(ctx, out, out, []Signer{Keys(signer(t, "ed25519.sec.asc"))}, &SignOptions{Progress: func(int64, int64) {
				once.Do(func() { close(started); <-release })
			}})
			signed <- err
		}()
		<-started
		built := make(chan error)
		go func() { built <- newBuild("v2", nil).WriteFile(ctx, out) }()
		select {
		case err := <-built:
			t.Fatalf("build did not wait for sign (err %v)", err)
		case <-time.After(200 * time.Millisecond):
		}
		close(release)
		if err := <-signed; err != nil {
			t.Fatal(err)
		}
		if err := <-built; err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(out)
		if reader(t, b).Signed() || content(out) != "v2" {
			t.Errorf("after sign then build: want unsigned v2, got signed=%v %q", reader(t, b).Signed(), content(out))
		}
	})

	t.Run("build first", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "app.cloud")
		if err := newBuild("v1", nil).WriteFile(ctx, out); err != nil {
			t.Fatal(err)
		}
		opened, release := make(chan struct{}), make(chan struct{})
		w := newBuild("v2", func() (io.ReadCloser, error) {
			close(opened)
			<-release
			return io.NopCloser(strings.NewReader("v2")), nil
		})
		built := make(chan error)
		go func() { built <- w.WriteFile(ctx, out) }()
		<-opened
		signed := make(chan error)
		go func() {
			_, err := SealFile(ctx, out, out, []Signer{Keys(signer(t, "ed25519.sec.asc"))}, nil)
			signed <- err
		}()
		select {
		case err := <-signed:
			t.Fatalf("sign did not wait for build (err %v)", err)
		case <-time.After(200 * time.Millisecond):
		}
		close(release)
		if err := <-built; err != nil {
			t.Fatal(err)
		}
		if err := <-signed; err != nil {
			t.Fatal(err)
		}
		verifyFile(t, out, trusted)
		if c := content(out); c != "v2" {
			t.Errorf("sign after build signed %q, want v2", c)
		}
	})
}

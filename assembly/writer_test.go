package assembly

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/internal/testenv/scaling"
)

// testTree writes files whose sizes straddle the chunk boundaries.
func testTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	rng := rand.New(rand.NewSource(1))
	random := func(n int) []byte { b := make([]byte, n); rng.Read(b); return b }
	text := func(n int) []byte {
		return []byte(strings.Repeat("Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n", n/40+1)[:n])
	}
	files := map[string][]byte{
		"empty.txt":         {},
		"one.txt":           []byte("x"),
		"stacks/b.yaml":     text(5000),
		"stacks/a.yaml":     text(70000),
		"docker/image.tar":  append(random(chunkSize+chunkSize/2), text(2*chunkSize)...),
		"exact/chunk.bin":   random(chunkSize),
		"exact/chunk1.bin":  random(chunkSize + 1),
		"unicodé/naïve.txt": []byte("utf-8 names"),
	}
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func buildTree(t *testing.T, dir string, files map[string][]byte, opts WriterOptions) []byte {
	t.Helper()
	w := NewWriter(opts)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := w.AddFile(name, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddBytes("manifest.json", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n, err := w.WriteTo(context.Background(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo returned %d, wrote %d", n, buf.Len())
	}
	return buf.Bytes()
}

func TestWriterRoundTrip(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	dir := t.TempDir()
	files := testTree(t, dir)
	b := buildTree(t, dir, files, WriterOptions{})
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	files["manifest.json"] = []byte(`{}`)
	var names []string
	for _, f := range r.Files() {
		names = append(names, f.Name())
		h := f.zf.FileHeader
		if h.Mode().Perm() != 0o644 || !h.Mode().IsRegular() {
			t.Errorf("%s: mode %v", f.Name(), h.Mode())
		}
		if !h.Modified.Equal(DefaultModTime()) {
			t.Errorf("%s: time %v", f.Name(), h.Modified)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		if err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		if !bytes.Equal(got, files[f.Name()]) {
			t.Errorf("%s: content differs (%d bytes, want %d)", f.Name(), len(got), len(files[f.Name()]))
		}
	}
	want := slices.Sorted(maps.Keys(files))
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant sorted:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	if unzip, err := exec.LookPath("unzip"); err == nil {
		p := filepath.Join(t.TempDir(), "a.cloud")
		os.WriteFile(p, b, 0o644)
		if out, err := exec.Command(unzip, "-t", p).CombinedOutput(); err != nil {
			t.Errorf("unzip -t: %v\n%s", err, out)
		}
	}
}

func TestWriterReproducible(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	dir := t.TempDir()
	files := testTree(t, dir)
	first := buildTree(t, dir, files, WriterOptions{Workers: 1})
	// New modification times and more workers change nothing.
	for i, name := range slices.Sorted(maps.Keys(files)) {
		when := time.Now().Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(name)), when, when); err != nil {
			t.Fatal(err)
		}
	}
	again := buildTree(t, dir, files, WriterOptions{Workers: 5})
	if !bytes.Equal(first, again) {
		t.Fatal("rebuild after touching the files gives different bytes")
	}
	// SOURCE_DATE_EPOCH changes the time, and only the time.
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	dated := buildTree(t, dir, files, WriterOptions{})
	if bytes.Equal(first, dated) || len(first) != len(dated) {
		t.Fatal("SOURCE_DATE_EPOCH not applied")
	}
	r, err := NewReader(bytes.NewReader(dated), int64(len(dated)))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Files()[0].zf.FileHeader.Modified; !got.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("time = %v", got)
	}
}

func TestSourceDateEpoch(t *testing.T) {
	for _, bad := range []string{"yesterday", "-1", "100", "99999999999"} {
		t.Setenv("SOURCE_DATE_EPOCH", bad)
		if _, err := SourceDateEpoch(); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
			t.Errorf("%s: got %v", bad, err)
		}
	}
}

func TestWriteFileFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "app.cloud")
	w := NewWriter(WriterOptions{})
	w.AddBytes("a.txt", []byte("a"))
	w.AddFile("b.txt", filepath.Join(dir, "does-not-exist"))
	if err := w.WriteFile(context.Background(), out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v, want not-exist", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
	// An existing output survives a failed rebuild untouched.
	os.WriteFile(out, []byte("old"), 0o644)
	if err := w.WriteFile(context.Background(), out); err == nil {
		t.Fatal("no error")
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Fatalf("output clobbered: %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
}

func TestWriteFileToFolder(t *testing.T) {
	dir := t.TempDir()
	w := NewWriter(WriterOptions{})
	w.AddBytes("a.txt", []byte("a"))
	for _, out := range []string{dir, dir + string(filepath.Separator)} {
		err := w.WriteFile(context.Background(), out)
		if !errors.Is(err, output.ErrFolder) {
			t.Errorf("WriteFile(%q) = %v, want a folder error", out, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

// Progress counts every content byte once, ends at the total, and says -1
// for a total it cannot know.
func TestWriterProgress(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("x"), 3<<20+17)
	os.WriteFile(filepath.Join(dir, "big"), big, 0o644)
	for _, known := range []bool{true, false} {
		var calls, last, total int64
		w := NewWriter(WriterOptions{Progress: func(done, tot int64) {
			if done < last {
				t.Errorf("progress went back: %d after %d", done, last)
			}
			calls++
			last, total = done, tot
		}})
		w.AddBytes("a.txt", []byte("hello"))
		w.AddFile("big.bin", filepath.Join(dir, "big"))
		size := int64(-1)
		if known {
			size = 3
		}
		w.AddOpener("c.txt", size, func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("abc")), nil })
		if _, err := w.WriteTo(context.Background(), io.Discard); err != nil {
			t.Fatal(err)
		}
		want := int64(len(big) + 5 + 3)
		if last != want {
			t.Errorf("done ends at %d, want %d", last, want)
		}
		if known && total != want || !known && total != -1 {
			t.Errorf("known=%v: total %d", known, total)
		}
		if calls < 4 || calls > 10 {
			t.Errorf("%d calls for 3 MiB", calls)
		}
	}
}

func TestWriterRejectsNames(t *testing.T) {
	w := NewWriter(WriterOptions{})
	if err := w.AddBytes("../x", nil); !errors.Is(err, ErrInsecurePath) {
		t.Errorf("../x: %v", err)
	}
	if err := w.AddBytes("dir/", nil); !errors.Is(err, ErrInsecurePath) {
		t.Errorf("dir/: %v", err)
	}
	w.AddBytes("a", nil)
	if err := w.AddBytes("a", nil); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate: %v", err)
	}
	// Names the reader refuses are refused when added, so the writer never
	// produces an assembly that Open rejects.
	if err := w.AddBytes("bad\xff", nil); !errors.Is(err, ErrInsecurePath) {
		t.Errorf("invalid UTF-8: %v", err)
	}
	if err := w.AddBytes("A", nil); !errors.Is(err, ErrDuplicate) {
		t.Errorf("case fold of a: %v", err)
	}
	long := strings.Repeat("abcdefgh/", MaxNameLength/9+1)
	if err := w.AddBytes(long, nil); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), `"abcdefgh/abcdefgh/`) {
		t.Errorf("long name: %v, want ErrTooLarge naming the path", err)
	}
	w.AddBytes("d/\u00e9", nil)
	if err := w.AddBytes("d/e\u0301", nil); !errors.Is(err, ErrDuplicate) {
		t.Errorf("NFD of an NFC name: %v", err)
	}
}

func TestWriterCancel(t *testing.T) {
	dir := t.TempDir()
	files := testTree(t, dir)
	w := NewWriter(WriterOptions{})
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w.AddFile(name, filepath.Join(dir, filepath.FromSlash(name)))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.WriteTo(ctx, io.Discard); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func BenchmarkWriter(b *testing.B) {
	dir := b.TempDir()
	rng := rand.New(rand.NewSource(1))
	w := NewWriter(WriterOptions{})
	var total int64
	for i := 0; i < 200; i++ {
		name := filepath.Join(dir, "t", string(rune('a'+i%26)), strings.Repeat("x", 1+i%7)+".yaml")
		os.MkdirAll(filepath.Dir(name), 0o755)
		body := []byte(strings.Repeat("  Bucket:\n    Type: AWS::S3::Bucket\n    Name: b"+string(rune('a'+i%26))+"\n", 200+i))
		os.WriteFile(name, body, 0o644)
		rel, _ := filepath.Rel(dir, name)
		if !w.Has(filepath.ToSlash(rel)) {
			w.AddFile(filepath.ToSlash(rel), name)
			total += int64(len(body))
		}
	}
	blob := make([]byte, 16<<20)
	rng.Read(blob)
	os.WriteFile(filepath.Join(dir, "blob"), blob, 0o644)
	w.AddFile("images/blob.tar", filepath.Join(dir, "blob"))
	total += int64(len(blob))
	b.SetBytes(total)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := w.WriteTo(context.Background(), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// An assembly copied entry by entry through AddFunc comes out identical.
func TestWriterAddFuncCopies(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	dir := t.TempDir()
	files := testTree(t, dir)
	b := buildTree(t, dir, files, WriterOptions{})
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(WriterOptions{})
	for _, f := range r.Files() {
		if err := w.AddFunc(f.Name(), f.Open); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), b) {
		t.Fatal("copy differs from the original")
	}
}

type failingWriter struct{ left int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		n := f.left
		f.left = 0
		return n, errors.New("disk full")
	}
	f.left -= len(p)
	return len(p), nil
}

func TestWriterDestinationError(t *testing.T) {
	dir := t.TempDir()
	files := testTree(t, dir)
	w := NewWriter(WriterOptions{})
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w.AddFile(name, filepath.Join(dir, filepath.FromSlash(name)))
	}
	if _, err := w.WriteTo(context.Background(), &failingWriter{left: 100000}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v", err)
	}
}

func TestManifestLimit(t *testing.T) {
	b := make([]byte, MaxManifestSize+1)
	if _, err := ParseManifest(b); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
}

// recordingSealer keeps what a Writer gives a Sealer, and gives it a
// signature.asc.
type recordingSealer struct {
	content map[string]*bytes.Buffer
	sig     []byte
	mod     time.Time
}

func (s *recordingSealer) Entry(name string) io.Writer {
	b := &bytes.Buffer{}
	s.content[name] = b
	return b
}

func (s *recordingSealer) Seal() ([]byte, time.Time, error) { return s.sig, s.mod, nil }

// A Sealer sees every entry's exact content, whatever the entries' sizes (a
// last entry with a data descriptor included), and the sealed archive is
// byte for byte the plain one with its signature appended by
// AppendSignature: the entries' bytes and central records unchanged, then
// signature.asc.
func TestWriterSealer(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, sizes := range [][]int{{0}, {10, 0, 3 << 20}, {2<<20 + 5}, {1, 2, 3, 1 << 20}} {
		files := map[string][]byte{}
		for i, n := range sizes {
			b := make([]byte, n)
			r.Read(b)
			files[string(rune('a'+i))+"/f.bin"] = b
		}
		write := func(s Sealer) []byte {
			w := NewWriter(WriterOptions{Sealer: s, ModTime: DefaultModTime()})
			for name, b := range files {
				w.AddBytes(name, b)
			}
			var buf bytes.Buffer
			if _, err := w.WriteTo(context.Background(), &buf); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
		plain := write(nil)
		s := &recordingSealer{content: map[string]*bytes.Buffer{}, sig: []byte("a signature\n"), mod: time.Date(2025, 2, 3, 4, 5, 6, 0, time.UTC)}
		sealed := write(s)
		for name, b := range files {
			if !bytes.Equal(s.content[name].Bytes(), b) {
				t.Errorf("%v: the sealer saw %d bytes of %s, want %d", sizes, s.content[name].Len(), name, len(b))
			}
		}
		pr, err := NewReader(bytes.NewReader(plain), int64(len(plain)))
		if err != nil {
			t.Fatal(err)
		}
		var appended bytes.Buffer
		if err := AppendSignature(context.Background(), &appended, pr, nil, s.Seal); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(sealed, appended.Bytes()) {
			t.Fatalf("%v: the sealed archive (%d bytes) is not the plain one with its signature appended (%d bytes)", sizes, len(sealed), appended.Len())
		}
		if !bytes.Equal(sealed[:pr.cdOffset], plain[:pr.cdOffset]) {
			t.Fatalf("%v: the entries' bytes changed", sizes)
		}
		sr, err := NewReader(bytes.NewReader(sealed), int64(len(sealed)))
		if err != nil {
			t.Fatalf("%v: %v", sizes, err)
		}
		for _, f := range pr.Files() {
			a, _ := f.centralRecord()
			b, _ := sr.File(f.Name()).centralRecord()
			if !bytes.Equal(a, b) {
				t.Errorf("%v: %s's central record changed", sizes, f.Name())
			}
		}
		if got := readFileOf(t, sr, SignatureName); !bytes.Equal(got, s.sig) || sr.Files()[len(sr.Files())-1].Name() != SignatureName {
			t.Errorf("%v: signature.asc is %q, or not the last entry", sizes, got)
		}
	}
}

// readFileOf is the content of r's file name.
func readFileOf(t *testing.T, r *Reader, name string) []byte {
	t.Helper()
	rc, err := r.File(name).Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The writer holds what it writes to the reader's size limits, and says so
// before it reads anything: a file over MaxFileSize, or files adding up to
// more than MaxTotalSize, which the reader would refuse (sparse files here,
// so nothing is really read).
func TestWriterSizeLimits(t *testing.T) {
	dir := t.TempDir()
	sparse := func(name string, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := f.Truncate(size); err != nil {
			t.Skipf("cannot make a sparse file of %d bytes: %v", size, err)
		}
		return p
	}
	w := NewWriter(WriterOptions{})
	w.AddFile("big.bin", sparse("big.bin", MaxFileSize+1))
	var err error
	read, ok := scaling.BytesRead(func() { _, err = w.WriteTo(context.Background(), io.Discard) })
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "big.bin") {
		t.Fatalf("a file over MaxFileSize: got %v, want ErrTooLarge naming it", err)
	}
	// The limit is known before reading: the process read next to none
	// of the 64 GiB (a count of bytes, not a time).
	if ok && read > 1<<20 {
		t.Errorf("read %d bytes: the limit is known before reading", read)
	}
	w = NewWriter(WriterOptions{})
	for i := 0; i*MaxFileSize <= MaxTotalSize; i++ {
		name := fmt.Sprintf("part%d.bin", i)
		w.AddFile(name, sparse(name, MaxFileSize))
	}
	if _, err := w.WriteTo(context.Background(), io.Discard); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "add up to") {
		t.Fatalf("files over MaxTotalSize together: got %v, want ErrTooLarge", err)
	}
}

// A file of 4 GiB or more gets a zip64 extra field in the central
// directory. The zip package writes the local header's offset into it
// while the record's own offset field holds the offset too; APPNOTE 4.5.3
// allows a value in the zip64 field only when the record's field is
// saturated (0xFFFFFFFF), and 7-Zip reports "Headers Error" for such an
// archive. The writer's central directory follows the rule: every value in
// a zip64 field has its record field saturated. (The archive is made with
// CreateRaw and a stated size of 5 GiB, so nothing large is written.)
func TestWriterZip64FieldsFollowAPPNOTE(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	data := []byte("not really five gigabytes")
	for _, name := range []string{"big.bin", "small.txt"} {
		fh := &zip.FileHeader{Name: name, Method: zip.Store, CRC32: crc32.ChecksumIEEE(data), CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(data))}
		if name == "big.bin" {
			// As the writer writes a long entry: sizes in a data descriptor.
			fh.Method, fh.UncompressedSize64, fh.Flags = zip.Deflate, 5<<30, 0x8
		}
		w, err := zw.CreateRaw(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if err := zip64FieldsSaturated(b); err == nil {
		t.Fatal("the zip package wrote zip64 fields by the rule: is the mending still needed?")
	}
	records, _, ok := centralRecords(b)
	if !ok {
		t.Fatal("centralRecords found no central directory")
	}
	mendZip64Offsets(records)
	if err := zip64FieldsSaturated(b); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("the mended archive: %v", err)
	}
	if f := r.File("big.bin"); f == nil || f.Size() != 5<<30 || f.headerOffset() != 0 {
		t.Fatalf("big.bin read back as %+v", f)
	}
	if f := r.File("small.txt"); f == nil || f.headerOffset() == 0 {
		t.Fatalf("small.txt read back as %+v", f)
	}
	if sevenZip, err := exec.LookPath("7zz"); err == nil {
		p := filepath.Join(t.TempDir(), "big.zip")
		os.WriteFile(p, b, 0o644)
		out, _ := exec.Command(sevenZip, "l", p).CombinedOutput()
		if bytes.Contains(out, []byte("Headers Error")) {
			t.Errorf("7-Zip still reports Headers Error:\n%s", out)
		}
	}
	// The writer mends what it writes: its central directory passes the
	// same check (small files here; the mending is a no-op, and must
	// leave a valid archive).
	w := NewWriter(WriterOptions{})
	w.AddBytes("a.txt", data)
	var out bytes.Buffer
	if _, err := w.WriteTo(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	if err := zip64FieldsSaturated(out.Bytes()); err != nil {
		t.Fatal(err)
	}
}

// zip64FieldsSaturated checks APPNOTE 4.5.3 on every central directory
// record of b: a zip64 extra field holds the uncompressed size, compressed
// size and offset, in that order, exactly for the record fields that are
// 0xFFFFFFFF.
func zip64FieldsSaturated(b []byte) error {
	entries, err := checkStructure(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	for _, e := range entries {
		rec := b[e.centralAt : e.centralAt+uint64(e.centralSize)]
		nameLen, extraLen := int(le16(rec[28:])), int(le16(rec[30:]))
		want := 0
		for _, at := range []int{24, 20, 42} { // uncompressed, compressed, offset
			if le32(rec[at:]) == u32max {
				want += 8
			}
		}
		for extra := rec[centralLen+nameLen : centralLen+nameLen+extraLen]; len(extra) >= 4; extra = extra[4+int(le16(extra[2:])):] {
			if le16(extra) == 0x0001 && int(le16(extra[2:])) != want {
				return fmt.Errorf("%q: zip64 field of %d bytes, the saturated record fields call for %d", e.name, le16(extra[2:]), want)
			}
		}
	}
	return nil
}

// TestWriterTrailer: the trailer is made from the SHA-256 of every other
// entry's content, taken as they stream (an entry over one chunk too), and
// written last; its name obeys the same rules as any entry's.
func TestWriterTrailer(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), (3*chunkSize)/16+7)
	contents := map[string][]byte{"b.txt": []byte("bee"), "a/big.bin": big, "empty": nil, "manifest.json": []byte("{}")}
	w := NewWriter(WriterOptions{Workers: 3})
	for name, data := range contents {
		if err := w.AddBytes(name, data); err != nil {
			t.Fatal(err)
		}
	}
	var seen map[string][sha256.Size]byte
	if err := w.SetTrailer("zz/../t", nil); err == nil {
		t.Error("a trailer name with a .. segment was accepted")
	}
	if err := w.SetTrailer("B.TXT", nil); !errors.Is(err, ErrDuplicate) {
		t.Errorf("a trailer name equal to an entry's after folding: %v, want ErrDuplicate", err)
	}
	if err := w.SetTrailer("trailer.json", func(sums map[string][sha256.Size]byte) ([]byte, error) {
		seen = sums
		return []byte("made from " + fmt.Sprint(len(sums))), nil
	}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(contents) {
		t.Fatalf("trailer saw %d sums, want %d", len(seen), len(contents))
	}
	for name, data := range contents {
		if seen[name] != sha256.Sum256(data) {
			t.Errorf("sum of %s is not its content's", name)
		}
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	last := zr.File[len(zr.File)-1]
	if last.Name != "trailer.json" {
		t.Fatalf("last entry %s, want the trailer", last.Name)
	}
	rc, _ := last.Open()
	got, _ := io.ReadAll(rc)
	if string(got) != "made from 4" {
		t.Errorf("trailer content %q", got)
	}
	if _, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len())); err != nil {
		t.Errorf("the reader refuses an archive with a trailer: %v", err)
	}
	// A failing trailer fails the write.
	w2 := NewWriter(WriterOptions{})
	w2.AddBytes("manifest.json", []byte("{}"))
	boom := errors.New("boom")
	w2.SetTrailer("t", func(map[string][sha256.Size]byte) ([]byte, error) { return nil, boom })
	if _, err := w2.WriteTo(context.Background(), io.Discard); !errors.Is(err, boom) {
		t.Errorf("failing trailer: %v, want boom", err)
	}
}

// headerOffset is where f's local header starts in the archive.
func (f *File) headerOffset() int64 { return int64(f.ent.offset) }

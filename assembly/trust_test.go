package assembly

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zip"
)

// Issue #11 defect 4: names the tree cannot hold on Linux, macOS and
// Windows are refused, each with its rule named; the writer refuses what
// the reader refuses.
func TestCheckNameRules(t *testing.T) {
	long := strings.Repeat("x", 256)
	tests := []struct{ name, rule string }{
		{"", RuleEmpty},
		{"a\xffb", RuleNotUTF8},
		{"/etc/passwd", RuleAbsolute},
		{`a\b`, RuleBackslash},
		{"C:/x", RuleDriveLetter},
		{"a\nb", RuleControl},
		{"a\x7fb", RuleControl},
		{"a\u0085b", RuleControl},
		{"a\u009fb", RuleControl},
		{"invoice\u202efdp.exe", RuleBidi},
		{"a\u202ab", RuleBidi},
		{"a\u2066b", RuleBidi},
		{"a\u2069b", RuleBidi},
		{"ab:c", RuleWindowsCharacter},
		{"what?.txt", RuleWindowsCharacter},
		{"a*b", RuleWindowsCharacter},
		{`a"b`, RuleWindowsCharacter},
		{"a<b>", RuleWindowsCharacter},
		{"a|b", RuleWindowsCharacter},
		{"a//b", RuleEmptySegment},
		{"a/", RuleEmptySegment},
		{"a/./b", RuleDotSegment},
		{"../x", RuleDotSegment},
		{long, RuleSegmentTooLong},
		{"d/" + long + "/e", RuleSegmentTooLong},
		{"notes ", RuleTrailing},
		{"dir /x", RuleTrailing},
		{"file.", RuleTrailing},
		{"dir./x", RuleTrailing},
		{"...", RuleTrailing},
		{"CON", RuleWindowsDevice},
		{"con", RuleWindowsDevice},
		{"NUL.txt", RuleWindowsDevice},
		{"stacks/aux.yaml", RuleWindowsDevice},
		{"PRN.tar.gz", RuleWindowsDevice},
		{"COM1", RuleWindowsDevice},
		{"com9.json", RuleWindowsDevice},
		{"LPT1", RuleWindowsDevice},
		{"lpt0.x", RuleWindowsDevice},
		{"COM\u00b9", RuleWindowsDevice},
		{"CONIN$", RuleWindowsDevice},
		{"conout$.log", RuleWindowsDevice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckName(tt.name)
			if !errors.Is(err, ErrInsecurePath) || !strings.Contains(err.Error(), "(rule "+tt.rule+")") {
				t.Fatalf("CheckName(%q) = %v, want ErrInsecurePath naming rule %s", tt.name, err, tt.rule)
			}
			w := NewWriter(WriterOptions{})
			if err := w.AddBytes(tt.name, nil); !errors.Is(err, ErrInsecurePath) {
				t.Errorf("Writer.AddBytes(%q) = %v, want ErrInsecurePath", tt.name, err)
			}
		})
	}
	for _, ok := range []string{"CONFIG.json", "console", "com10", "COM", "lpt", "nul_x/y", "aux-stack.yaml", "con.d/x",
		"a b/c d.txt", ".hidden", "a..b", "caf\u00e9/na\u00efve.txt", "\u65e5\u672c/\u8a9e.yaml", strings.Repeat("x", 255), "a/b/c"} {
		if ok == "con.d/x" {
			continue // "con.d" is the device CON with an extension
		}
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", ok, err)
		}
	}
}

// A name that is both a file and a folder cannot be extracted: "a" beside
// "a/b", in either order, also after case folding and with directory entries.
func TestFileAndFolderClash(t *testing.T) {
	for _, names := range [][]string{
		{"a", "a/b"},
		{"a/b", "a"},
		{"x/a", "x/a/b/c"},
		{"A", "a/b"},
		{"a/B/c", "a/b"},
		{"caf\u00e9", "cafe\u0301/x"},
		{"a", "a/"},
		{"a/", "a"},
		{"a/", "A"},
	} {
		t.Run(strings.Join(names, " "), func(t *testing.T) {
			b := rawZipEntries(t, names...)
			_, err := NewReader(bytes.NewReader(b), int64(len(b)))
			if !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), "rule "+RuleFileAndFolder) {
				t.Fatalf("NewReader: got %v, want ErrDuplicate naming rule %s", err, RuleFileAndFolder)
			}
			w := NewWriter(WriterOptions{})
			var werr error
			for _, n := range names {
				if !strings.HasSuffix(n, "/") {
					if werr = w.AddBytes(n, nil); werr != nil {
						break
					}
				}
			}
			if werr == nil && !strings.HasSuffix(names[0], "/") && !strings.HasSuffix(names[1], "/") {
				t.Errorf("Writer accepted %q", names)
			}
		})
	}
	// Folders shared by files, and directory entries of folders that hold
	// files, are fine.
	b := rawZipEntries(t, "a/", "a/b/", "a/b/c", "a/d", "e/")
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(r.Files()); got != 2 {
		t.Errorf("%d files, want 2 (directory entries are not files)", got)
	}
	var dirs []string
	for _, d := range r.Dirs() {
		dirs = append(dirs, d.Name())
	}
	if got := strings.Join(dirs, " "); got != "a/ a/b/ e/" {
		t.Errorf("Dirs() = %q", got)
	}
}

// rawZipEntries is rawZip where names ending in "/" become empty stored
// directory entries (mode 040755), as zip -r writes them.
func rawZipEntries(t testing.TB, names ...string) []byte {
	t.Helper()
	return rawZipOf(t, true, names...)
}

// Issue #11 defect 3: bytes that no check covered. Each archive passes the
// structural checks or is refused by them, and reading every file either
// fails with ErrCorrupt or gives exactly the content.
func TestBytesAccountedFor(t *testing.T) {
	put16, put32 := binary.LittleEndian.PutUint16, binary.LittleEndian.PutUint32
	insert := func(b []byte, at int, add []byte) []byte {
		return append(append(append([]byte{}, b[:at]...), add...), b[at:]...)
	}
	// shiftCentral fixes offsets after n bytes were inserted at or before
	// the central directory (which starts at cd).
	shiftCentral := func(_ *testing.T, b []byte, n int) {
		cd := binary.LittleEndian.Uint32(b[len(b)-6:])
		put32(b[len(b)-6:], cd+uint32(n))
	}
	tests := []struct {
		name       string
		mutate     func(t *testing.T, b []byte) []byte
		structural error // NewReader's verdict
		read       error // reading the files' verdict
	}{
		{"valid", func(t *testing.T, b []byte) []byte { return b }, nil, nil},
		{"entry comment", func(t *testing.T, b []byte) []byte {
			c := centralAt(t, b, 0)
			n := 46 + int(binary.LittleEndian.Uint16(b[c+28:])) + int(binary.LittleEndian.Uint16(b[c+30:]))
			b = insert(b, c+n, []byte("hello"))
			put16(b[c+32:], 5)
			put32(b[len(b)-10:], binary.LittleEndian.Uint32(b[len(b)-10:])+5) // central directory size
			return b
		}, ErrFormat, nil},
		{"unknown extra field in both headers", func(t *testing.T, b []byte) []byte {
			extra := []byte{0x34, 0x12, 3, 0, 'a', 'b', 'c'}
			c, l := centralAt(t, b, 0), localAt(t, b, 0)
			// Central first (it is after the local header).
			cn := int(binary.LittleEndian.Uint16(b[c+28:]))
			ce := int(binary.LittleEndian.Uint16(b[c+30:]))
			b = insert(b, c+46+cn+ce, extra)
			put16(b[c+30:], uint16(ce+len(extra)))
			put32(b[len(b)-10:], binary.LittleEndian.Uint32(b[len(b)-10:])+uint32(len(extra)))
			ln := int(binary.LittleEndian.Uint16(b[l+26:]))
			le := int(binary.LittleEndian.Uint16(b[l+28:]))
			b = insert(b, l+30+ln+le, extra)
			put16(b[l+28:], uint16(le+len(extra)))
			shiftCentral(t, b, len(extra))
			return b
		}, ErrFormat, nil},
		{"unknown extra field in the central directory", func(t *testing.T, b []byte) []byte {
			extra := []byte{0x34, 0x12, 0, 0}
			c := centralAt(t, b, 0)
			n := 46 + int(binary.LittleEndian.Uint16(b[c+28:]))
			b = insert(b, n+c, extra)
			put16(b[c+30:], uint16(len(extra)))
			put32(b[len(b)-10:], binary.LittleEndian.Uint32(b[len(b)-10:])+uint32(len(extra)))
			return b
		}, ErrFormat, nil},
		{"wrong crc in both headers", func(t *testing.T, b []byte) []byte {
			b[localAt(t, b, 0)+14] ^= 1
			b[centralAt(t, b, 0)+16] ^= 1
			return b
		}, nil, ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.mutate(t, rawZip(t, "manifest.json"))
			r, err := NewReader(bytes.NewReader(b), int64(len(b)))
			if tt.structural != nil || err != nil {
				if !errors.Is(err, tt.structural) {
					t.Fatalf("NewReader: got %v, want %v", err, tt.structural)
				}
				return
			}
			err = readAll(r)
			if tt.read == nil && err != nil || !errors.Is(err, tt.read) {
				t.Fatalf("reading: got %v, want %v", err, tt.read)
			}
		})
	}
}

func readAll(r *Reader) error {
	for _, f := range r.Files() {
		rc, err := f.Open()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		if int64(len(b)) != f.Size() {
			return errors.New("short read without an error")
		}
	}
	return nil
}

// deflated returns an archive with one deflated entry whose compressed
// data is stream (its CRC-32 and size those of content).
func deflated(t *testing.T, name string, content, stream []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(content),
		CompressedSize64: uint64(len(stream)), UncompressedSize64: uint64(len(content))})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(stream)
	zw.Close()
	return buf.Bytes()
}

func deflate(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	fw, _ := flate.NewWriter(&out, 6)
	fw.Write(b)
	fw.Close()
	return out.Bytes()
}

// Issue #11 defect 3: bytes after the end of the deflate stream, inside the
// declared compressed size, are refused when the entry is read; so are a
// content longer or shorter than its headers and a corrupt stream.
func TestContentChecks(t *testing.T) {
	content := []byte(strings.Repeat("Resources: {}\n", 100))
	stream := deflate(t, content)
	tests := []struct {
		name   string
		stream []byte
		header []byte // content the headers describe
		want   error
		msg    string
	}{
		{"exact", stream, content, nil, ""},
		{"one byte after the stream", append(append([]byte{}, stream...), 0), content, ErrCorrupt, "bytes hidden after it"},
		{"a second stream after the stream", append(append([]byte{}, stream...), deflate(t, []byte("evil"))...), content, ErrCorrupt, "bytes hidden after it"},
		{"content longer than the headers", stream, content[:len(content)-1], ErrCorrupt, "longer than"},
		{"content shorter than the headers", stream, append(append([]byte{}, content...), 'x'), ErrCorrupt, "its headers state"},
		{"truncated stream", stream[:len(stream)-3], content, ErrCorrupt, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := deflated(t, "manifest.json", tt.header, tt.stream)
			r, err := NewReader(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			err = readAll(r)
			if tt.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want %v with %q", err, tt.want, tt.msg)
			}
		})
	}
}

// Real ZIP writers: Python's zipfile writes mode 0600 with no file-type
// bits, which is a regular file; a type other than regular is refused.
func TestModeWithoutTypeBits(t *testing.T) {
	for _, tt := range []struct {
		mode uint32
		want error
	}{{0o600, nil}, {0o100644, nil}, {0, nil}, {0o120777, ErrFormat}, {0o020644, ErrFormat}, {0o040755, ErrFormat}} {
		b := rawZip(t, "manifest.json")
		c := centralAt(t, b, 0)
		binary.LittleEndian.PutUint16(b[c+4:], 3<<8|20)
		binary.LittleEndian.PutUint32(b[c+38:], tt.mode<<16)
		r, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
			t.Errorf("mode %o: got %v, want %v", tt.mode, err, tt.want)
			continue
		}
		if err == nil && len(r.Files()) != 1 {
			t.Errorf("mode %o: %d files", tt.mode, len(r.Files()))
		}
	}
}

// Directory entries hold nothing: one with data is refused.
func TestDirectoryEntryWithData(t *testing.T) {
	// The zip writer refuses data for a name ending in "/": write "d_",
	// then rename it to "d/" in both headers.
	dirEntry := func(method uint16, data []byte) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		h := &zip.FileHeader{Name: "d_", Method: method, CompressedSize64: uint64(len(data))}
		if method == zip.Store {
			h.CRC32, h.UncompressedSize64 = crc32.ChecksumIEEE(data), uint64(len(data))
		}
		h.SetMode(0o40755 | 1<<31)
		w, _ := zw.CreateRaw(h)
		w.Write(data)
		zw.Close()
		return bytes.ReplaceAll(buf.Bytes(), []byte("d_"), []byte("d/"))
	}
	b := dirEntry(zip.Store, []byte("hidden"))
	if _, err := NewReader(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrFormat) {
		t.Fatalf("stored data: got %v, want ErrFormat", err)
	}
	// An empty deflate stream (as jar writes for folders) is fine.
	b = dirEntry(zip.Deflate, []byte{3, 0})
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil || len(r.Files()) != 0 || len(r.Dirs()) != 1 {
		t.Fatalf("empty deflated directory entry: %v", err)
	}
}

// Issue #11 defect 7: the names and the central directory of an
// unauthenticated archive are bounded together, not only per entry.
func TestNameBytesBounded(t *testing.T) {
	seg := strings.Repeat("n", 250)
	var names []string
	total := 0
	for i := 0; total <= MaxNameBytes; i++ {
		n := seg + "/" + seg + "/" + seg + "/" + seg[:200] + string(rune('a'+i%26)) + strings.Repeat("z", i/26%10) + "/" + itoa(i)
		names = append(names, n)
		total += len(n)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		if _, err := zw.CreateRaw(&zip.FileHeader{Name: n, Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	b := buf.Bytes()
	_, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "file names add up to more than") {
		t.Fatalf("got %v, want ErrTooLarge for the names", err)
	}
	w := NewWriter(WriterOptions{})
	for i, n := range names {
		if err = w.AddBytes(n, nil); err != nil {
			if i != len(names)-1 || !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Writer.AddBytes #%d: %v", i, err)
			}
		}
	}
	if err == nil {
		t.Fatal("Writer accepted more name bytes than the reader")
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		if i /= 10; i == 0 {
			return string(b)
		}
	}
}

// FuzzNameRules: the reader and the writer agree on every name (one rule,
// CheckName), and an accepted name is local on this system, has segments
// Windows keeps as they are, no device name, no control or bidirectional
// characters.
func FuzzNameRules(f *testing.F) {
	for _, s := range []string{"a/b.txt", "Signature.asc", "manifest.json/x", "CON", "con.txt", "a\u202eb", "a\u0085", "x ", "x.", "a:b", strings.Repeat("y", 256), "d/", "caf\u00e9", "COM\u00b9.log", "lpt10"} {
		f.Add(s)
	}
	device := regexp.MustCompile(`(?i)^(con|prn|aux|nul|com[0-9\x{b9}\x{b2}\x{b3}]|lpt[0-9\x{b9}\x{b2}\x{b3}]|conin\$|conout\$) *(\.|$)`)
	f.Fuzz(func(t *testing.T, name string) {
		if len(name) > MaxNameLength+16 {
			return
		}
		checkErr := CheckName(name)
		writeErr := NewWriter(WriterOptions{}).AddBytes(name, nil)
		if checkErr != nil && writeErr == nil {
			t.Fatalf("writer accepts %q, CheckName says %v", name, checkErr)
		}
		if checkErr == nil && writeErr != nil {
			// Beyond CheckName's rules for one name, only the reserved
			// root names (a folder manifest.json/, a file Signature.asc).
			if !errors.Is(writeErr, ErrInsecurePath) || !strings.Contains(writeErr.Error(), "(rule "+RuleReserved+")") {
				t.Fatalf("writer says %v, CheckName accepts %q", writeErr, name)
			}
			checkErr = writeErr
		}
		if !strings.HasSuffix(name, "/") {
			b := rawZip(t, name)
			_, err := NewReader(bytes.NewReader(b), int64(len(b)))
			if (err == nil) != (writeErr == nil) {
				t.Fatalf("reader says %v, writer says %v", err, writeErr)
			}
		}
		if checkErr != nil {
			if !errors.Is(checkErr, ErrInsecurePath) && !errors.Is(checkErr, ErrTooLarge) || !strings.Contains(checkErr.Error(), "(rule ") {
				t.Fatalf("error without its class or rule: %v", checkErr)
			}
			return
		}
		if !filepath.IsLocal(filepath.FromSlash(name)) {
			t.Fatalf("accepted %q, which is not local", name)
		}
		for _, seg := range strings.Split(name, "/") {
			if len(seg) == 0 || len(seg) > MaxSegmentLength || strings.TrimRight(seg, ". ") != seg || device.MatchString(seg) {
				t.Fatalf("accepted %q: segment %q", name, seg)
			}
		}
		for _, c := range name {
			if unicode.IsControl(c) || unicode.Is(unicode.Bidi_Control, c) && c != 0x200e && c != 0x200f && c != 0x061c || strings.ContainsRune(`\<>:"|?*`, c) {
				t.Fatalf("accepted %q with %U", name, c)
			}
		}
		// The same name in other letter cases (each rune one step along
		// its case orbit) is the same file on macOS and Windows.
		variant := strings.Map(unicode.SimpleFold, name)
		if variant != name && CheckName(variant) == nil {
			s := newNameSet(2)
			if err := s.addFile(name); err != nil {
				t.Fatal(err)
			}
			if err := s.addFile(variant); !errors.Is(err, ErrDuplicate) {
				t.Fatalf("%q beside %q: got %v, want ErrDuplicate", variant, name, err)
			}
		}
	})
}

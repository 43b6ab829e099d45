package assembly

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"
)

// Interesting external attributes: Unix modes in the high 16 bits (what
// real writers put there, and every file type, special and world-writable
// bits), MS-DOS attributes in the low 16 (read-only, folder, archive,
// 7-Zip's Unix extension, volume label, device, reparse point).
var (
	attrModes = []uint32{0, 0o600, 0o644, 0o755, 0o775, 0o777, 0o666,
		0o100644, 0o100755, 0o100600, 0o100664, 0o100666, 0o100777, 0o104755, 0o102755, 0o101644,
		0o120777, 0o120644, 0o040755, 0o040775, 0o040777, 0o041755, 0o040700,
		0o020644, 0o060644, 0o010644, 0o140644, 0o170644, 0o030644}
	attrDOS = []uint32{0, 0x01, 0x10, 0x11, 0x20, 0x8020, 0x8010, 0x08, 0x40, 0x400, 0x420}
)

// zipWithAttrs writes one stored entry per name, each with its "made by"
// host and external attributes.
func zipWithAttrs(t testing.TB, host byte, names []string, attrs []uint32) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i, n := range names {
		body := []byte("target")
		if strings.HasSuffix(n, "/") {
			body = nil
		}
		h := &zip.FileHeader{Name: n, Method: zip.Store, CreatorVersion: uint16(host)<<8 | 20, ExternalAttrs: attrs[i],
			CRC32: crc32.ChecksumIEEE(body), CompressedSize64: uint64(len(body)), UncompressedSize64: uint64(len(body))}
		w, err := zw.CreateRaw(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// unsafeFile reports why a file (or folder, dir) with this mode, as a
// reader made it, is anything but a plain regular file (plain folder).
func unsafeMode(m fs.FileMode, dir bool) string {
	switch {
	case dir && !m.IsDir():
		return "not a folder: " + m.String()
	case !dir && !m.IsRegular():
		return "not a regular file: " + m.String()
	case m&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0:
		return "special bits: " + m.String()
	case m.Perm()&0o002 != 0:
		return "world-writable: " + m.String()
	}
	return ""
}

// sevenZipMode is how 7-Zip (CPP/7zip/Archive/Zip/ZipItem.cpp, and its
// extraction on Unix) reads an entry's attributes: the high 16 bits are a
// Unix mode when the host is Unix, or when an MS-DOS or NTFS entry sets
// the Unix-extension bit 0x8000; the MS-DOS folder bit, and a reparse
// point (a link, on Windows) are honoured on every host.
func sevenZipMode(host byte, attrs uint32, dir bool) string {
	dos := attrs & 0xffff
	if host == 3 || (host == 0 || host == 11) && dos&0x8000 != 0 {
		if mode := attrs >> 16; mode != 0 {
			if why := unsafeMode(unixMode(mode, dir), dir); why != "" {
				return why
			}
		}
	}
	if host == 0 || host == 11 {
		switch {
		case dos&0x400 != 0:
			return "reparse point"
		case !dir && dos&0x10 != 0:
			return "folder bit on a file"
		}
	}
	return ""
}

// unixMode is a Unix mode as an fs.FileMode (no type bits: a regular
// file, or a folder for a name ending in "/", as readers take it).
func unixMode(mode uint32, dir bool) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	switch mode & 0o170000 {
	case 0:
		if dir {
			m |= fs.ModeDir
		}
	case 0o100000:
	case 0o040000:
		m |= fs.ModeDir
	case 0o120000:
		m |= fs.ModeSymlink
	case 0o010000:
		m |= fs.ModeNamedPipe
	case 0o140000:
		m |= fs.ModeSocket
	case 0o060000:
		m |= fs.ModeDevice
	case 0o020000:
		m |= fs.ModeDevice | fs.ModeCharDevice
	default:
		m |= fs.ModeIrregular
	}
	if mode&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if mode&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// Issue 19 item 1, the property: for every "made by" host byte (all 256)
// and every interesting external attribute, for a file and a folder entry,
// an entry the rule accepts is a plain regular file (a plain folder, not
// world-writable, no special bits) for Go's archive/zip, for 7-Zip, and
// for Info-ZIP unzip itself (run with -K, umask 022, when installed):
// whatever the host, no reader makes a link, a device or a world-writable
// folder of what verifies. And the rule does not depend on the host.
func TestExternalAttributesProperty(t *testing.T) {
	unzip, _ := exec.LookPath("unzip")
	if unzip == "" {
		t.Log("unzip is not installed: checking against Go's archive/zip and the 7-Zip model only")
	}
	var names []string
	var attrs []uint32
	for _, dir := range []bool{false, true} {
		for _, m := range attrModes {
			for _, d := range attrDOS {
				n := fmt.Sprintf("f%d", len(names))
				if dir {
					n = fmt.Sprintf("d%d/", len(names))
				}
				names = append(names, n)
				attrs = append(attrs, m<<16|d)
			}
		}
	}
	verdict := make([]string, len(names)) // the rule's, for host 0
	accepted, links := 0, 0
	for host := 0; host < 256; host++ {
		b := zipWithAttrs(t, byte(host), names, attrs)
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		var out string
		if unzip != "" && (host <= 19 || host == 30 || host == 31 || host == 200) && (!testing.Short() || host%3 == 0) {
			// unzip knows hosts 0 to 19 and 30; it reads the others as
			// MS-DOS: a sample of them is enough.
			f := filepath.Join(t.TempDir(), "a.zip")
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
			out = t.TempDir()
			cmd := exec.Command("sh", "-c", `umask 022 && exec "$0" -qqoK "$1" -d "$2"`, unzip, f, out)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Logf("host %d: unzip: %v %s", host, err, msg)
			}
		}
		for i, n := range names {
			dir := strings.HasSuffix(n, "/")
			e := &entry{name: n, creator: uint16(host)<<8 | 20, externalAttrs: attrs[i], dir: dir}
			err := checkAttrs(e)
			got := fmt.Sprint(err)
			if host == 0 {
				verdict[i] = got
			} else if got != verdict[i] {
				t.Errorf("host %d, %s attrs %#08x: %v; host 0: %s (the rule must not depend on the host)", host, n, attrs[i], err, verdict[i])
			}
			if err != nil {
				if !errors.Is(err, ErrFormat) {
					t.Errorf("host %d, %s attrs %#08x: %v, want ErrFormat", host, n, attrs[i], err)
				}
				continue
			}
			accepted++
			goMode := zr.File[i].Mode()
			if host != 3 && host != 19 {
				// Go reads MS-DOS attributes (0666, 0777 for a folder),
				// a mode to which extraction applies the umask.
				goMode &^= 0o022
			}
			if why := unsafeMode(goMode, dir); why != "" {
				t.Errorf("host %d, %s attrs %#08x accepted, but Go's archive/zip reads it as %s", host, n, attrs[i], why)
			}
			if why := sevenZipMode(byte(host), attrs[i], dir); why != "" {
				t.Errorf("host %d, %s attrs %#08x accepted, but 7-Zip reads it as %s", host, n, attrs[i], why)
			}
			if out != "" {
				st, err := os.Lstat(filepath.Join(out, n))
				if err != nil {
					t.Errorf("host %d, %s attrs %#08x accepted, but unzip did not write it: %v", host, n, attrs[i], err)
				} else if why := unsafeMode(st.Mode(), dir); why != "" {
					t.Errorf("host %d, %s attrs %#08x accepted, but unzip made it %s", host, n, attrs[i], why)
				}
			}
		}
		if out != "" {
			// The oracle sees what it must: unzip makes links of some hosts.
			for i, n := range names {
				if st, err := os.Lstat(filepath.Join(out, strings.TrimSuffix(n, "/"))); err == nil && st.Mode()&fs.ModeSymlink != 0 && verdict[i] != "<nil>" {
					links++
				}
			}
		}
	}
	if accepted == 0 || (unzip != "" && links == 0) {
		t.Fatalf("%d accepted, unzip made %d links: the property tests nothing", accepted, links)
	}
	t.Logf("%d entries accepted over 256 hosts; unzip made %d links, all refused", accepted, links)
}

// What real writers put in the external attributes is accepted: Info-ZIP
// and Go on Unix, Python's zipfile, jar and Windows tools.
func TestExternalAttributesOfRealWriters(t *testing.T) {
	for _, tt := range []struct {
		host  byte
		name  string
		attrs uint32
	}{
		{3, "f", 0o100644<<16 | 0}, {3, "f", 0o100755 << 16}, {3, "f", 0o100664 << 16}, {3, "f", 0o600 << 16},
		{3, "d/", 0o040755<<16 | 0x10}, {3, "d/", 0o040775<<16 | 0x10}, {3, "d/", 0o040755 << 16},
		{0, "f", 0}, {0, "f", 0x20}, {0, "f", 0x01}, {0, "d/", 0x10}, {11, "f", 0x20}, {11, "d/", 0x10},
		{19, "f", 0o100644 << 16}, {0, "f", 0o100644<<16 | 0x8020}, // 7-Zip on Linux
	} {
		e := &entry{name: tt.name, creator: uint16(tt.host)<<8 | 20, externalAttrs: tt.attrs, dir: strings.HasSuffix(tt.name, "/")}
		if err := checkAttrs(e); err != nil {
			t.Errorf("host %d, %s, attrs %#08x: %v", tt.host, tt.name, tt.attrs, err)
		}
	}
}

// Issue 19 item 1, the attack: a file relabelled as made on BeOS, VMS,
// Atari, AtheOS or OS X with a symlink mode, and a 0777 folder, are
// refused by NewReader whatever the host.
func TestSymlinkInDisguise(t *testing.T) {
	for _, host := range []byte{16, 2, 5, 30, 19, 3, 0, 11, 18, 255} {
		for _, tt := range []struct {
			name string
			mode uint32
		}{{"manifest.json", 0o120777}, {"d/", 0o777}, {"d/", 0o040777}, {"d/", 0o120755}, {"manifest.json", 0o100666}, {"manifest.json", 0o104755}} {
			names := []string{"manifest.json"}
			if tt.name != "manifest.json" {
				names = append(names, tt.name)
			}
			b := rawZipEntries(t, names...)
			c := centralAt(t, b, len(names)-1)
			b[c+5] = host
			binary.LittleEndian.PutUint32(b[c+38:], tt.mode<<16)
			if _, err := NewReader(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), fmt.Sprintf("%06o", tt.mode)) {
				t.Errorf("host %d, %s mode %06o: got %v, want ErrFormat naming the mode", host, tt.name, tt.mode, err)
			}
		}
	}
}

// Issue 19 item 3: a non-ASCII name needs the UTF-8 flag, or an Info-ZIP
// Unicode Path field agreeing with it; without either, readers that
// follow the flag read another name.
func TestNonASCIINameNeedsUTF8Flag(t *testing.T) {
	name := "site/café.html"
	unicodePath := func(n string) []byte {
		body := append([]byte{1, 0, 0, 0, 0}, n...)
		binary.LittleEndian.PutUint32(body[1:], crc32.ChecksumIEEE([]byte(name)))
		return append([]byte{0x75, 0x70, byte(len(body)), 0}, body...)
	}
	for _, tt := range []struct {
		what  string
		flag  bool
		extra []byte
		want  error
	}{
		{"flag", true, nil, nil},
		{"no flag", false, nil, ErrFormat},
		{"Unicode Path field", false, unicodePath(name), nil},
		{"Unicode Path field of another name", false, unicodePath("site/cafe.html"), ErrFormat},
		{"flag and Unicode Path field", true, unicodePath(name), nil},
	} {
		t.Run(tt.what, func(t *testing.T) {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			for _, n := range []string{"manifest.json", name} {
				h := &zip.FileHeader{Name: n, Method: zip.Store, Extra: tt.extra}
				if n == "manifest.json" {
					h.Extra = nil
				}
				if tt.flag {
					h.Flags |= flagUTF8
				}
				w, err := zw.CreateRaw(h)
				if err != nil {
					t.Fatal(err)
				}
				w.Write(nil)
			}
			zw.Close()
			b := buf.Bytes()
			r, err := NewReader(bytes.NewReader(b), int64(len(b)))
			if tt.want == nil {
				if err != nil || r.File(name) == nil {
					t.Fatalf("got %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
	// ASCII names need neither.
	b := rawZip(t, "manifest.json", "site/cafe.html")
	if _, err := NewReader(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
}

// FuzzEntryAttributes (issue 19 items 1 and 3): for any host, external
// attributes, flags, name and extra field of one entry, the verdict does
// not depend on the host; an accepted entry is a plain regular file (or
// folder) for Go's archive/zip and the 7-Zip model, not world-writable
// where its reader takes a Unix mode; and an accepted non-ASCII name has
// the UTF-8 flag or a Unicode Path field holding that very name.
func FuzzEntryAttributes(f *testing.F) {
	f.Add(byte(3), uint32(0o100644<<16), uint16(0), "f.txt", []byte(nil))
	f.Add(byte(16), uint32(0o120777<<16), uint16(0), "f.txt", []byte(nil))
	f.Add(byte(0), uint32(0o040777<<16|0x10), uint16(0), "d/", []byte(nil))
	f.Add(byte(0), uint32(0x8020|0o120644<<16), uint16(0), "f", []byte(nil))
	f.Add(byte(3), uint32(0o100644<<16), uint16(0), "café.html", []byte(nil))
	f.Add(byte(3), uint32(0o100644<<16), uint16(flagUTF8), "café.html", []byte(nil))
	f.Add(byte(3), uint32(0o100644<<16), uint16(0), "café.html", []byte{0x75, 0x70, 5, 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, host byte, attrs uint32, flags uint16, name string, extra []byte) {
		e := &entry{name: name, creator: uint16(host)<<8 | 20, externalAttrs: attrs, flags: flags, centralExtra: extra, dir: strings.HasSuffix(name, "/")}
		err := checkAttrs(e)
		e0 := *e
		e0.creator = 20
		if err0 := checkAttrs(&e0); fmt.Sprint(err) != fmt.Sprint(err0) {
			t.Fatalf("host %d: %v; host 0: %v", host, err, err0)
		}
		if err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("%v: not ErrFormat", err)
		}
		if err == nil {
			fh := &zip.FileHeader{Name: name, CreatorVersion: uint16(host)<<8 | 20, ExternalAttrs: attrs}
			m := fh.Mode()
			if host != 3 && host != 19 {
				m &^= 0o022
			}
			if why := unsafeMode(m, e.dir); why != "" && (e.dir || !strings.HasSuffix(name, "/")) {
				t.Fatalf("host %d attrs %#08x %q accepted: Go reads %s", host, attrs, name, why)
			}
			if why := sevenZipMode(host, attrs, e.dir); why != "" {
				t.Fatalf("host %d attrs %#08x %q accepted: 7-Zip reads %s", host, attrs, name, why)
			}
		}
		if checkExtra(extra, name) == nil && utf8Named(e) && !isASCII(name) && flags&flagUTF8 == 0 {
			found := false
			for b := extra; len(b) >= 4; {
				n := int(le16(b[2:]))
				if len(b)-4 < n {
					break
				}
				if le16(b) == 0x7075 && string(b[4+5:4+n]) == name {
					found = true
				}
				b = b[4+n:]
			}
			if !found {
				t.Fatalf("%q accepted without the flag or a Unicode Path field naming it", name)
			}
		}
	})
}

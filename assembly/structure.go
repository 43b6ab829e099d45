package assembly

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"strings"
)

// ZIP record signatures and fixed lengths (APPNOTE.TXT 4.3).
const (
	sigLocal      = 0x04034b50
	sigCentral    = 0x02014b50
	sigEnd        = 0x06054b50
	sigEnd64      = 0x06064b50
	sigLoc64      = 0x07064b50
	sigDescriptor = 0x08074b50

	localLen   = 30
	centralLen = 46
	endLen     = 22
	end64Len   = 56
	loc64Len   = 20

	u16max = 0xffff
	u32max = 0xffffffff

	// Flag bits that must not be set: 0 encrypted, 6 strong encryption,
	// 13 encrypted central directory.
	flagEncrypted  = 1 << 0
	flagDescriptor = 1 << 3
	flagPatched    = 1 << 5
	flagStrong     = 1 << 6
	flagUTF8       = 1 << 11
	flagMasked     = 1 << 13

	methodStore   = 0
	methodDeflate = 8

	// maxVersionNeeded is the highest "version needed to extract" of the
	// entries we allow: 4.5, zip64 (APPNOTE 4.4.3.2).
	maxVersionNeeded = 45
)

// entry is one archive member as the raw bytes describe it.
type entry struct {
	name           string
	flags, method  uint16
	crc            uint32
	csize, usize   uint64
	offset         uint64 // of the local header
	end            uint64 // just past the data (and data descriptor)
	creator        uint16
	needs          uint16 // version needed to extract
	externalAttrs  uint32
	centralComment int
	centralExtra   []byte // only while checkStructure runs
	dir            bool   // a directory entry: name ends in "/"
	centralAt      uint64 // where the raw central directory record is
	centralSize    int    // and its length
}

// checkStructure checks the raw bytes of a ZIP archive against the container
// rules of a Cloud Assembly, before any entry is inflated: one end record at
// the very end and no comment; zip64 records only when needed and consistent;
// entries that tile the file from offset 0 to the central directory with no
// gap or overlap; local headers that agree with the central directory; only
// stored or deflated, unencrypted, regular files with safe, unique names.
// It returns the entries in central-directory order.
func checkStructure(r io.ReaderAt, size int64) ([]entry, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	// A read that fails is the reader's error (a remote location's, say),
	// kept in the chain beside ErrFormat.
	readErr := func(what string, err error) error {
		return fmt.Errorf("%w: reading %s: %w", ErrFormat, what, err)
	}
	if size < endLen {
		if startsLikeZip(r, size) {
			return nil, fmt.Errorf("%w: the file ends after %d bytes, before the zip end record", ErrTruncated, size)
		}
		return nil, bad("%d bytes is too short for a zip archive", size)
	}
	var eb [endLen]byte
	if _, err := r.ReadAt(eb[:], size-endLen); err != nil {
		return nil, readErr("end record", err)
	}
	if le32(eb[0:]) != sigEnd {
		return nil, noEndRecord(r, size, bad)
	}
	if n := le16(eb[20:]); n != 0 {
		return nil, bad("archive comment of %d bytes; comments are not allowed", n)
	}
	if le16(eb[4:]) != 0 || le16(eb[6:]) != 0 || le16(eb[8:]) != le16(eb[10:]) {
		return nil, bad("multi-disk archives are not supported")
	}
	records := uint64(le16(eb[10:]))
	cdSize := uint64(le32(eb[12:]))
	cdOffset := uint64(le32(eb[16:]))
	tail := uint64(size) - endLen // where the central directory must end (or the zip64 records start)

	needs64 := records == u16max || cdSize == u32max || cdOffset == u32max
	has64 := false
	if size >= endLen+loc64Len {
		var lb [loc64Len]byte
		if _, err := r.ReadAt(lb[:], size-endLen-loc64Len); err != nil {
			return nil, readErr("zip64 locator", err)
		}
		has64 = le32(lb[0:]) == sigLoc64
		if has64 {
			// Writers may use zip64 records when no value needs them
			// (zip -fz, zip from a pipe): allowed when the two end records
			// agree, so every reader sees one directory.
			if le32(lb[4:]) != 0 || le32(lb[16:]) != 1 {
				return nil, bad("multi-disk zip64 archives are not supported")
			}
			off64 := le64(lb[8:])
			if off64+end64Len+loc64Len+endLen != uint64(size) {
				return nil, bad("zip64 end record at offset %d is not directly before its locator", off64)
			}
			var b64 [end64Len]byte
			if _, err := r.ReadAt(b64[:], int64(off64)); err != nil {
				return nil, readErr("zip64 end record", err)
			}
			if le32(b64[0:]) != sigEnd64 || le64(b64[4:]) != end64Len-12 {
				return nil, bad("malformed zip64 end record at offset %d", off64)
			}
			if le32(b64[16:]) != 0 || le32(b64[20:]) != 0 || le64(b64[24:]) != le64(b64[32:]) {
				return nil, bad("multi-disk zip64 archives are not supported")
			}
			r64, s64, o64 := le64(b64[32:]), le64(b64[40:]), le64(b64[48:])
			if (records != u16max && records != r64) || (cdSize != u32max && cdSize != s64) || (cdOffset != u32max && cdOffset != o64) {
				return nil, bad("zip64 end record disagrees with the classic end record")
			}
			records, cdSize, cdOffset = r64, s64, o64
			tail = off64
		}
	}
	if needs64 && !has64 {
		return nil, bad("end record needs zip64 values but there is no zip64 end record")
	}
	if records > MaxFiles {
		return nil, fmt.Errorf("%w: %d files, at most %d allowed", ErrTooLarge, records, MaxFiles)
	}
	if cdSize > MaxDirectorySize {
		return nil, fmt.Errorf("%w: central directory of %d bytes, at most %d allowed", ErrTooLarge, cdSize, MaxDirectorySize)
	}
	if cdOffset > tail || cdOffset+cdSize != tail {
		return nil, bad("central directory (offset %d, %d bytes) does not end where the end record starts (offset %d): extra bytes or a second end record", cdOffset, cdSize, tail)
	}

	cd := make([]byte, cdSize)
	if _, err := r.ReadAt(cd, int64(cdOffset)); err != nil {
		return nil, readErr("central directory", err)
	}
	entries := make([]entry, 0, records)
	var nameBytes uint64
	for p := 0; p < len(cd); {
		if len(cd)-p < centralLen || le32(cd[p:]) != sigCentral {
			return nil, bad("malformed central directory entry at offset %d", cdOffset+uint64(p))
		}
		h := cd[p : p+centralLen]
		nameLen, extraLen, commentLen := int(le16(h[28:])), int(le16(h[30:])), int(le16(h[32:]))
		if len(cd)-p-centralLen < nameLen+extraLen+commentLen {
			return nil, bad("central directory entry at offset %d overruns the directory", cdOffset+uint64(p))
		}
		e := entry{
			creator:        le16(h[4:]),
			needs:          le16(h[6:]),
			flags:          le16(h[8:]),
			method:         le16(h[10:]),
			crc:            le32(h[16:]),
			csize:          uint64(le32(h[20:])),
			usize:          uint64(le32(h[24:])),
			externalAttrs:  le32(h[38:]),
			offset:         uint64(le32(h[42:])),
			centralComment: commentLen,
		}
		if le16(h[34:]) != 0 {
			return nil, bad("entry at offset %d is on another disk", cdOffset+uint64(p))
		}
		name := cd[p+centralLen : p+centralLen+nameLen]
		extra := cd[p+centralLen+nameLen : p+centralLen+nameLen+extraLen]
		if nameBytes += uint64(nameLen); nameBytes > MaxNameBytes {
			return nil, fmt.Errorf("%w: file names add up to more than %d bytes", ErrTooLarge, MaxNameBytes)
		}
		e.name = string(name)
		e.centralExtra = extra
		if err := readZip64Extra(&e, extra); err != nil {
			return nil, bad("%q: %v", e.name, err)
		}
		e.centralAt, e.centralSize = cdOffset+uint64(p), centralLen+nameLen+extraLen+commentLen
		entries = append(entries, e)
		p += centralLen + nameLen + extraLen + commentLen
		if uint64(len(entries)) > records {
			break
		}
	}
	if uint64(len(entries)) != records {
		return nil, bad("end record says %d entries, central directory holds %d", records, len(entries))
	}

	var total uint64
	names := newNameSet(len(entries))
	for i := range entries {
		e := &entries[i]
		if err := checkEntry(e); err != nil {
			return nil, err
		}
		total += e.usize
		if total > MaxTotalSize {
			return nil, fmt.Errorf("%w: files add up to more than %d bytes", ErrTooLarge, uint64(MaxTotalSize))
		}
		var err error
		if e.dir {
			err = names.addFolder(strings.TrimSuffix(e.name, "/"))
		} else {
			err = names.addFile(e.name)
		}
		if err != nil {
			return nil, err
		}
		e.centralExtra = nil // keep no reference to cd
	}

	// Local headers, in file order, must tile [0, cdOffset).
	order := make([]*entry, len(entries))
	for i := range entries {
		order[i] = &entries[i]
	}
	sort.Slice(order, func(i, j int) bool { return order[i].offset < order[j].offset })
	var pos uint64
	for _, e := range order {
		if e.offset != pos {
			if e.offset < pos {
				return nil, bad("%q at offset %d overlaps the previous entry (which ends at %d)", e.name, e.offset, pos)
			}
			return nil, bad("%d unexplained bytes at offset %d, before %q", e.offset-pos, pos, e.name)
		}
		if err := checkLocal(r, e, cdOffset); err != nil {
			return nil, err
		}
		pos = e.end
	}
	if pos != cdOffset {
		if pos > cdOffset {
			return nil, bad("the last entry overlaps the central directory")
		}
		return nil, bad("%d unexplained bytes at offset %d, before the central directory", cdOffset-pos, pos)
	}
	return entries, nil
}

// readZip64Extra replaces saturated central-directory fields with the values
// of the zip64 extra field, in the order APPNOTE 4.5.3 gives.
func readZip64Extra(e *entry, extra []byte) error {
	needU, needC, needO := e.usize == u32max, e.csize == u32max, e.offset == u32max
	found := false
	for len(extra) >= 4 {
		id, n := le16(extra), int(le16(extra[2:]))
		if len(extra)-4 < n {
			return fmt.Errorf("extra field overruns its header")
		}
		body := extra[4 : 4+n]
		extra = extra[4+n:]
		if id != 0x0001 {
			continue
		}
		if found {
			return fmt.Errorf("two zip64 extra fields")
		}
		found = true
		for _, f := range []struct {
			need bool
			dst  *uint64
		}{{needU, &e.usize}, {needC, &e.csize}, {needO, &e.offset}} {
			if !f.need {
				continue
			}
			if len(body) < 8 {
				return fmt.Errorf("zip64 extra field too short")
			}
			*f.dst = le64(body)
			body = body[8:]
		}
	}
	if len(extra) != 0 {
		return fmt.Errorf("malformed extra field")
	}
	if (needU || needC || needO) && !found {
		return fmt.Errorf("saturated size or offset without a zip64 extra field")
	}
	return nil
}

// checkEntry checks one central directory entry on its own. A directory
// entry (name ending in "/", as zip -r and jar write) holds no data; every
// other entry is a regular file: a Unix mode without type bits (Python's
// zipfile writes 0600) counts as a regular file.
func checkEntry(e *entry) error {
	e.dir = strings.HasSuffix(e.name, "/")
	if !e.dir {
		if err := CheckName(e.name); err != nil {
			return err
		}
	} else if err := CheckName(strings.TrimSuffix(e.name, "/")); err != nil {
		return err
	}
	if e.needs > maxVersionNeeded {
		// unzip refuses such an entry ("need PK compat. v23.5"): so do we.
		return fmt.Errorf("%w: %q: version %d.%d needed to extract it; stored, deflated and zip64 entries need at most %d.%d", ErrFormat, e.name, e.needs/10, e.needs%10, maxVersionNeeded/10, maxVersionNeeded%10)
	}
	if e.centralComment != 0 {
		return fmt.Errorf("%w: %q has a comment of %d bytes; entry comments are not allowed", ErrFormat, e.name, e.centralComment)
	}
	if err := checkExtra(e.centralExtra, e.name); err != nil {
		return fmt.Errorf("%w: %q: central directory: %v", ErrFormat, e.name, err)
	}
	if e.flags&(flagEncrypted|flagStrong|flagMasked) != 0 {
		return fmt.Errorf("%w: %q is encrypted; encrypted entries are not allowed", ErrFormat, e.name)
	}
	if e.flags&flagPatched != 0 {
		return fmt.Errorf("%w: %q uses compressed patched data", ErrFormat, e.name)
	}
	switch e.method {
	case methodStore:
		if e.csize != e.usize {
			return fmt.Errorf("%w: %q is stored but its sizes differ (%d, %d)", ErrFormat, e.name, e.csize, e.usize)
		}
	case methodDeflate:
	default:
		return fmt.Errorf("%w: %q uses compression method %d; only stored (0) and deflate (8) are allowed", ErrFormat, e.name, e.method)
	}
	if e.usize > MaxFileSize {
		return fmt.Errorf("%w: %q is %d bytes, at most %d allowed", ErrTooLarge, e.name, e.usize, uint64(MaxFileSize))
	}
	if err := checkAttrs(e); err != nil {
		return err
	}
	if e.dir {
		// An empty deflate stream is 2 bytes; the data is read and must
		// be empty (NewReader).
		if e.usize != 0 || e.csize > 2 || e.crc != 0 {
			return fmt.Errorf("%w: directory entry %q holds data (%d bytes); a folder cannot", ErrFormat, e.name, e.usize)
		}
	}
	if !utf8Named(e) {
		return fmt.Errorf("%w: %q: a non-ASCII name without the UTF-8 flag (bit 11) or an Info-ZIP Unicode Path field: readers that follow the flag (Python's zipfile, Windows) read it as CP437, another name; write the archive with 'assemble build', Python's zipfile or 7-Zip, which set the flag", ErrFormat, e.name)
	}
	return nil
}

// External attributes (APPNOTE 4.4.15). The low 16 bits are MS-DOS
// attributes; the high 16 bits are a Unix mode, which readers take from
// more hosts than Unix (3): Info-ZIP unzip from VMS, Atari, AtheOS, BeOS,
// QDOS, Tandem, THEOS and Acorn too, and from MS-DOS (PKZip for Unix) when
// the owner bits agree with the DOS ones; Go's archive/zip from OS X (19);
// 7-Zip from any MS-DOS or NTFS entry with its Unix-extension bit (0x8000).
const (
	dosReadOnly  = 0x01
	dosVolume    = 0x08  // a volume label, not a file
	dosDirectory = 0x10  // a folder
	dosDevice    = 0x40  // a device
	dosReparse   = 0x400 // a Windows reparse point: a link, for 7-Zip
	modeType     = 0o170000
	modeRegular  = 0o100000
	modeDir      = 0o040000
	modeSpecial  = 0o7000 // setuid, setgid, sticky (unzip -K restores them)
	modeOtherW   = 0o002  // world-writable
)

// checkAttrs is the rule on an entry's external attributes, whatever its
// "made by" host: read the high 16 bits as a Unix mode and the low 16 bits
// as MS-DOS attributes, as some common reader does for some host, and
// refuse what any of them would take for anything but a regular file (for
// a folder entry, a plain folder): a Unix type other than regular (or
// folder), no type at all being a regular file (Python's zipfile writes
// 0600); setuid, setgid or sticky bits; a world-writable mode (unzip
// restores it as it is, umask aside); the MS-DOS folder bit on a file; the
// volume label, device and reparse point bits. Files and folders are held
// to the same permission rule.
func checkAttrs(e *entry) error {
	mode, dos := e.externalAttrs>>16, e.externalAttrs&0xffff
	what, kind, want := "file", "regular file", uint32(modeRegular)
	if e.dir {
		what, kind, want = "folder", "folder", modeDir
	}
	switch typ := mode & modeType; {
	case typ != 0 && typ != want:
		return fmt.Errorf("%w: %q: its external attributes hold Unix mode %06o, which is not a %s (readers such as unzip and Go's archive/zip would make %s); only regular files and folders are allowed", ErrFormat, e.name, mode, kind, modeName(typ))
	case mode&modeSpecial != 0:
		return fmt.Errorf("%w: %s %q has Unix mode %06o, with setuid, setgid or sticky bits; they are not allowed", ErrFormat, what, e.name, mode)
	case mode&modeOtherW != 0:
		return fmt.Errorf("%w: %s %q has Unix mode %06o: world-writable (unzip would make it so); write it without the o+w bit", ErrFormat, what, e.name, mode)
	case !e.dir && dos&dosDirectory != 0:
		return fmt.Errorf("%w: %q is marked as a directory but its name does not end in \"/\"", ErrFormat, e.name)
	case dos&(dosVolume|dosDevice|dosReparse) != 0:
		return fmt.Errorf("%w: %s %q has MS-DOS attributes %#04x: a volume label, device or reparse point (a link), not a %s", ErrFormat, what, e.name, dos, kind)
	}
	return nil
}

// modeName names a Unix file type.
func modeName(typ uint32) string {
	switch typ {
	case 0o120000:
		return "a symbolic link"
	case 0o140000:
		return "a socket"
	case 0o060000:
		return "a block device"
	case 0o020000:
		return "a character device"
	case 0o010000:
		return "a FIFO"
	case modeDir:
		return "a folder"
	case modeRegular:
		return "a regular file"
	}
	return fmt.Sprintf("file type %06o", typ)
}

// utf8Named reports whether readers agree on e's name: it is ASCII, or
// the entry sets the UTF-8 flag (bit 11, APPNOTE appendix D), or its
// central directory holds an Info-ZIP Unicode Path field (0x7075), which
// checkExtra has found equal to the name.
func utf8Named(e *entry) bool {
	for i := 0; i < len(e.name); i++ {
		if e.name[i] >= 0x80 {
			return e.flags&flagUTF8 != 0 || hasExtra(e.centralExtra, 0x7075)
		}
	}
	return true
}

// hasExtra reports whether an extra field block holds a field of the id.
func hasExtra(extra []byte, id uint16) bool {
	for len(extra) >= 4 {
		n := int(le16(extra[2:]))
		if le16(extra) == id {
			return true
		}
		if len(extra)-4 < n {
			return false
		}
		extra = extra[4+n:]
	}
	return false
}

// checkExtra checks an extra field block (APPNOTE 4.5): well-formed
// records, each of an ID we know to carry only what no reader takes for
// the name or the content: zip64 sizes (0x0001), times (0x000a NTFS,
// 0x5455 extended timestamp), Unix owners (0x5855, 0x7855, 0x7875), the
// jar marker (0xcafe, empty), and a Unicode path (0x7075) equal to the
// entry's UTF-8 name. Anything else, which other readers might act on and
// no signature covers, is refused.
func checkExtra(extra []byte, name string) error {
	for len(extra) > 0 {
		if len(extra) < 4 {
			return fmt.Errorf("malformed extra field")
		}
		id, n := le16(extra), int(le16(extra[2:]))
		if len(extra)-4 < n {
			return fmt.Errorf("extra field %#04x overruns its header", id)
		}
		body := extra[4 : 4+n]
		extra = extra[4+n:]
		switch id {
		case 0x0001, 0x000a, 0x5455, 0x5855, 0x7855, 0x7875:
		case 0xcafe:
			if n != 0 {
				return fmt.Errorf("jar marker extra field with %d bytes of data", n)
			}
		case 0x7075:
			// Info-ZIP Unicode Path: version 1, CRC-32 of the header
			// name, the name in UTF-8. Readers that use it would
			// extract under that name: it must be the same.
			if n < 5 || body[0] != 1 || le32(body[1:]) != crc32.ChecksumIEEE([]byte(name)) || string(body[5:]) != name {
				return fmt.Errorf("Unicode path extra field that differs from the entry name")
			}
		default:
			return fmt.Errorf("unknown extra field %#04x (%d bytes); only zip64, time, Unix owner and matching Unicode path fields are allowed", id, n)
		}
	}
	return nil
}

// hasZip64Extra reports whether an extra field block holds a zip64 field.
func hasZip64Extra(extra []byte) bool { return hasExtra(extra, 0x0001) }

// checkLocal reads e's local header and compares it with the central entry,
// setting e.end just past the entry's data and data descriptor.
func checkLocal(r io.ReaderAt, e *entry, limit uint64) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %q: %s", ErrFormat, e.name, fmt.Sprintf(format, args...))
	}
	readErr := func(what string, err error) error {
		return fmt.Errorf("%w: %q: reading %s: %w", ErrFormat, e.name, what, err)
	}
	var h [localLen]byte
	if e.offset+localLen > limit {
		return bad("local header runs into the central directory")
	}
	if _, err := r.ReadAt(h[:], int64(e.offset)); err != nil {
		return readErr("local header", err)
	}
	if le32(h[0:]) != sigLocal {
		return bad("no local header at offset %d", e.offset)
	}
	if needs := le16(h[4:]); needs > maxVersionNeeded {
		return bad("local header says version %d.%d is needed to extract it; stored, deflated and zip64 entries need at most %d.%d", needs/10, needs%10, maxVersionNeeded/10, maxVersionNeeded%10)
	}
	flags, method := le16(h[6:]), le16(h[8:])
	crc, csize, usize := le32(h[14:]), uint64(le32(h[18:])), uint64(le32(h[22:]))
	nameLen, extraLen := uint64(le16(h[26:])), uint64(le16(h[28:]))
	if flags != e.flags {
		return bad("local header flags %#x, central directory %#x", flags, e.flags)
	}
	if method != e.method {
		return bad("local header method %d, central directory %d", method, e.method)
	}
	if nameLen != uint64(len(e.name)) {
		return bad("local header name differs from the central directory")
	}
	body := e.offset + localLen + nameLen + extraLen
	if body > limit {
		return bad("local header runs into the central directory")
	}
	varPart := make([]byte, nameLen+extraLen)
	if _, err := r.ReadAt(varPart, int64(e.offset+localLen)); err != nil {
		return readErr("local header", err)
	}
	if string(varPart[:nameLen]) != e.name {
		return bad("local header name %q differs from the central directory", varPart[:nameLen])
	}
	if err := checkExtra(varPart[nameLen:], e.name); err != nil {
		return bad("local header: %v", err)
	}
	if e.csize > limit-body {
		return bad("data (%d bytes at offset %d) runs into the central directory", e.csize, body)
	}
	end := body + e.csize
	// A local header may carry zip64 sizes whatever the size (APPNOTE
	// 4.3.9.1; Python's force_zip64, zip -fz): saturated sizes are read from
	// its zip64 extra field, and when that field is there the data
	// descriptor holds 8-byte sizes (4.3.9.2). Writers that add no local
	// zip64 field (Go, Java) use 8-byte sizes when the sizes need them.
	localExtra := varPart[nameLen:]
	local64 := hasZip64Extra(localExtra)
	if (csize == u32max || usize == u32max) && (local64 || flags&flagDescriptor == 0) {
		le := entry{name: e.name, csize: csize, usize: usize}
		if err := readZip64Extra(&le, localExtra); err != nil {
			return bad("local header: %v", err)
		}
		csize, usize = le.csize, le.usize
	}
	zip64 := local64 || e.csize >= u32max || e.usize >= u32max
	if flags&flagDescriptor == 0 {
		if crc != e.crc || csize != e.csize || usize != e.usize {
			return bad("local header (crc %08x, sizes %d/%d) disagrees with the central directory (crc %08x, sizes %d/%d)", crc, csize, usize, e.crc, e.csize, e.usize)
		}
		e.end = end
		return nil
	}
	// Data descriptor: optional signature, CRC, then 4- or 8-byte sizes.
	if (crc != 0 && crc != e.crc) || (csize != 0 && csize != e.csize && csize != u32max) || (usize != 0 && usize != e.usize && usize != u32max) {
		return bad("local header disagrees with the central directory")
	}
	n := uint64(12)
	if zip64 {
		n = 20
	}
	var d [24]byte
	avail := limit - end
	if avail < 4 {
		return bad("data descriptor runs into the central directory")
	}
	if _, err := r.ReadAt(d[:min(uint64(len(d)), avail)], int64(end)); err != nil && err != io.EOF {
		return readErr("data descriptor", err)
	}
	dd := d[:]
	if le32(dd) == sigDescriptor {
		dd = dd[4:]
		n += 4
	}
	if n > avail {
		return bad("data descriptor runs into the central directory")
	}
	dcrc := le32(dd)
	var dc, du uint64
	if zip64 {
		dc, du = le64(dd[4:]), le64(dd[12:])
	} else {
		dc, du = uint64(le32(dd[4:])), uint64(le32(dd[8:]))
	}
	if dcrc != e.crc || dc != e.csize || du != e.usize {
		return bad("data descriptor (crc %08x, sizes %d/%d) disagrees with the central directory (crc %08x, sizes %d/%d)", dcrc, dc, du, e.crc, e.csize, e.usize)
	}
	e.end = end + n
	return nil
}

func le16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// noEndRecord says why a file does not end with an end record: one earlier
// in the file followed by other bytes (trailing bytes or a comment), a file
// that starts as a zip archive but stops before its end (a download cut
// short: ErrTruncated), or no zip archive at all.
func noEndRecord(r io.ReaderAt, size int64, bad func(string, ...any) error) error {
	n := min(size, endLen+u16max)
	tail := make([]byte, n)
	if _, err := r.ReadAt(tail, size-n); err == nil {
		for i := len(tail) - endLen; i >= 0; i-- {
			if le32(tail[i:]) == sigEnd {
				return bad("the zip end record is followed by %d bytes (trailing bytes or an archive comment)", len(tail)-i-endLen)
			}
		}
	}
	if startsLikeZip(r, size) {
		return fmt.Errorf("%w: the file ends after %d bytes, before the zip end record", ErrTruncated, size)
	}
	return bad("not a zip archive: no end of central directory record")
}

// startsLikeZip reports whether the file starts with a zip local header.
func startsLikeZip(r io.ReaderAt, size int64) bool {
	var h [4]byte
	return size >= 4 && func() bool { _, err := r.ReadAt(h[:], 0); return err == nil }() && le32(h[:]) == sigLocal
}

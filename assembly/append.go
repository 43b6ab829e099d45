package assembly

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	"github.com/klauspost/compress/zip"
)

// AppendSignature writes to dst a copy of the archive r in which
// signature.asc holds the bytes sign returns, and is its last entry: every
// other entry keeps its exact stored bytes. sign is called once, after
// those are written (so it may wait for work done meanwhile, such as
// hashing them); mod dates the new entry.
//
// When r's signature.asc, if it has one, is its last entry, the bytes
// before it are copied verbatim (by copyPrefix when it is not nil, which
// copies r's first n bytes to dst, as a caller holding the file can let
// the kernel do; else read through r) and a new tail follows: the stored
// signature.asc and the central directory, the other entries' records
// unchanged. Otherwise the entries are copied raw (same stored bytes and
// header fields) through a zip writer, directory entries afresh. Between
// entries the copy stops when ctx is done, with context.Cause(ctx).
//
// This is the one place the project writes ZIP offsets and headers
// itself; on error dst holds an incomplete archive.
func AppendSignature(ctx context.Context, dst io.Writer, r *Reader, copyPrefix func(dst io.Writer, n int64) error,
	sign func() (data []byte, mod time.Time, err error)) error {
	prefix, ok := r.appendPrefix()
	if !ok {
		return rewriteSigned(ctx, dst, r, sign)
	}
	if copyPrefix == nil {
		copyPrefix = func(dst io.Writer, n int64) error {
			_, err := io.Copy(dst, io.NewSectionReader(r.ra, 0, n))
			return err
		}
	}
	if err := copyPrefix(dst, prefix); err != nil {
		return err
	}
	sig, mod, err := sign()
	if err != nil {
		return err
	}
	var records [][]byte
	for _, f := range append(r.Files(), r.Dirs()...) {
		if f.Name() == SignatureName {
			continue
		}
		rec, err := f.centralRecord()
		if err != nil {
			return err
		}
		records = append(records, rec)
	}
	return writeSignedTail(dst, prefix, records, sig, mod)
}

// appendPrefix returns how many leading bytes of r's archive a signed
// copy keeps verbatim: everything up to the central directory, or up to
// the old signature.asc when it is the last entry in the file; false when
// signature.asc is not the last entry.
func (r *Reader) appendPrefix() (int64, bool) {
	sf := r.File(SignatureName)
	if sf == nil {
		return r.cdOffset, true
	}
	if int64(sf.ent.end) != r.cdOffset {
		return 0, false
	}
	return int64(sf.ent.offset), true
}

// rewriteSigned is AppendSignature through a zip writer: the entries but
// signature.asc copied raw, directory entries written afresh, then
// signature.asc.
func rewriteSigned(ctx context.Context, dst io.Writer, r *Reader, sign func() ([]byte, time.Time, error)) error {
	zw := zip.NewWriter(dst)
	for _, f := range r.Files() {
		if f.Name() == SignatureName {
			continue
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err := copyRaw(zw, f); err != nil {
			return fmt.Errorf("copying %q: %w", f.Name(), err)
		}
	}
	// Directory entries hold nothing: write each afresh (a raw copy of one
	// with an empty deflate stream would lose its 2 bytes).
	for _, d := range r.Dirs() {
		h := &zip.FileHeader{Name: d.Name(), Method: zip.Store}
		h.SetMode(os.ModeDir | 0o755)
		if _, err := zw.CreateHeader(h); err != nil {
			return err
		}
	}
	sig, mod, err := sign()
	if err != nil {
		return err
	}
	w, err := zw.CreateHeader(&zip.FileHeader{Name: SignatureName, Method: zip.Deflate, Modified: mod})
	if err != nil {
		return err
	}
	if _, err := w.Write(sig); err != nil {
		return err
	}
	return zw.Close()
}

// copyRaw copies f's stored bytes and header to zw without recompressing.
func copyRaw(zw *zip.Writer, f *File) error {
	h := f.zf.FileHeader
	h.Extra = stripZip64(h.Extra) // the writer adds its own when needed
	raw, err := f.zf.OpenRaw()
	if err != nil {
		return err
	}
	w, err := zw.CreateRaw(&h)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, raw)
	return err
}

// stripZip64 drops the zip64 extra field (0x0001) from extra.
func stripZip64(extra []byte) []byte {
	var out []byte
	for len(extra) >= 4 {
		id, n := int(extra[0])|int(extra[1])<<8, int(extra[2])|int(extra[3])<<8
		if 4+n > len(extra) {
			break
		}
		if id != 0x0001 {
			out = append(out, extra[:4+n]...)
		}
		extra = extra[4+n:]
	}
	return out
}

// writeSignedTail writes what follows the kept prefix (prefix bytes long):
// a stored signature.asc entry, then the central directory (records, the
// other entries' raw records, unchanged, then signature.asc's) and the end
// records. Together with the prefix it forms an archive in which every
// entry but signature.asc keeps its exact bytes, headers included.
func writeSignedTail(dst io.Writer, prefix int64, records [][]byte, sig []byte, mod time.Time) error {
	const u16max, u32max = 0xffff, 0xffffffff
	date, tm := dosTime(mod)
	crc := crc32.ChecksumIEEE(sig)
	name := SignatureName

	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	// Local header.
	le(uint32(0x04034b50))
	le(uint16(20))        // version needed
	le(uint16(0))         // flags
	le(uint16(0))         // stored
	le(tm)                // time
	le(date)              // date
	le(crc)               // crc-32
	le(uint32(len(sig)))  // compressed size
	le(uint32(len(sig)))  // uncompressed size
	le(uint16(len(name))) // name length
	le(uint16(0))         // extra length
	b.WriteString(name)
	b.Write(sig)
	cdStart := prefix + int64(b.Len())

	// Central directory: the kept entries' records, then signature.asc's.
	n := 0
	for _, rec := range records {
		b.Write(rec)
		n++
	}
	var extra []byte
	off := uint32(prefix)
	if prefix >= u32max {
		off = u32max
		extra = binary.LittleEndian.AppendUint16(extra, 0x0001)
		extra = binary.LittleEndian.AppendUint16(extra, 8)
		extra = binary.LittleEndian.AppendUint64(extra, uint64(prefix))
	}
	le(uint32(0x02014b50))
	le(uint16(3<<8 | 20)) // made by: Unix, 2.0
	le(uint16(20))        // version needed
	le(uint16(0))         // flags
	le(uint16(0))         // stored
	le(tm)
	le(date)
	le(crc)
	le(uint32(len(sig)))
	le(uint32(len(sig)))
	le(uint16(len(name)))
	le(uint16(len(extra)))
	le(uint16(0))              // comment length
	le(uint16(0))              // disk
	le(uint16(0))              // internal attributes
	le(uint32(0o100644 << 16)) // external attributes: regular file, 0644
	le(off)
	b.WriteString(name)
	b.Write(extra)
	n++
	cdSize := prefix + int64(b.Len()) - cdStart

	count, size, offset := uint64(n), uint64(cdSize), uint64(cdStart)
	if count >= u16max || size >= u32max || offset >= u32max {
		end64 := prefix + int64(b.Len())
		le(uint32(0x06064b50))
		le(uint64(44))
		le(uint16(45))
		le(uint16(45))
		le(uint32(0))
		le(uint32(0))
		le(count)
		le(count)
		le(size)
		le(offset)
		le(uint32(0x07064b50))
		le(uint32(0))
		le(uint64(end64))
		le(uint32(1))
		count, size, offset = u16max, u32max, u32max
	}
	le(uint32(0x06054b50))
	le(uint16(0))
	le(uint16(0))
	le(uint16(count))
	le(uint16(count))
	le(uint32(size))
	le(uint32(offset))
	le(uint16(0)) // no comment
	_, err := dst.Write(b.Bytes())
	return err
}

// dosTime encodes t (UTC) as MS-DOS date and time.
func dosTime(t time.Time) (date, tm uint16) {
	t = t.UTC()
	if t.Year() < 1980 {
		t = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	date = uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9)
	tm = uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)
	return date, tm
}

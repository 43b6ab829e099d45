package signing

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
)

// errNotAppendable: signature.asc is not the last entry in the file, so the
// archive cannot be re-signed by keeping its prefix.
var errNotAppendable = errors.New("signature.asc is not the last entry")

// appendPrefix returns how many leading bytes of r's archive a signed copy
// keeps verbatim: everything up to the central directory, or up to the old
// signature.asc when it is the last entry in the file.
func appendPrefix(r *assembly.Reader) (int64, error) {
	_, cd := r.Raw()
	sf := r.File(assembly.SignatureName)
	if sf == nil {
		return cd, nil
	}
	if sf.EndOffset() != cd {
		return 0, errNotAppendable
	}
	return sf.HeaderOffset(), nil
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
	name := assembly.SignatureName

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

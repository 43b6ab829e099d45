package signing

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// maxKeyFileSize bounds a key or keyring file.
const maxKeyFileSize = 16 << 20

// ReadKeys reads OpenPGP keys, public or secret: a binary keyring, or armored
// text holding one or several key blocks (as `cat a.asc b.asc` makes).
func ReadKeys(r io.Reader) (openpgp.EntityList, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxKeyFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxKeyFileSize {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrKeyFormat, maxKeyFileSize)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrKeyFormat)
	}
	var keys openpgp.EntityList
	if !bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
		// GnuPG would skip text before the armor; we say where it is, so a
		// keyring never holds more (or less) than its owner sees.
		if i := bytes.Index(data, []byte("-----BEGIN PGP ")); i >= 0 {
			line := bytes.Count(data[:i], []byte("\n")) + 1
			return nil, fmt.Errorf("%w: text before the armored key block (which starts on line %d); remove it, or export the key again with 'gpg --export --armor'", ErrKeyFormat, line)
		}
		if data[0]&0x80 == 0 {
			// A binary keyring starts with a packet tag, which has the top
			// bit set; go-crypto would say "tag byte does not have MSB set".
			return nil, fmt.Errorf("%w: neither an armored key block (-----BEGIN PGP PUBLIC KEY BLOCK-----) nor a binary keyring", ErrKeyFormat)
		}
		keys, err = readEntities(bytes.NewReader(data))
		if err != nil {
			return nil, err
		}
	} else {
		// ReadArmoredKeyRing reads only the first armor block: read each.
		const endMark = "-----END PGP "
		rest := trimmed
		for len(bytes.TrimSpace(rest)) > 0 {
			rest = bytes.TrimSpace(rest)
			if !bytes.HasPrefix(rest, []byte("-----BEGIN PGP ")) {
				return nil, fmt.Errorf("%w: text between armored key blocks", ErrKeyFormat)
			}
			i := bytes.Index(rest, []byte(endMark))
			if i < 0 {
				return nil, fmt.Errorf("%w: armored block without an END line", ErrKeyFormat)
			}
			j := bytes.IndexByte(rest[i:], '\n')
			if j < 0 {
				j = len(rest) - i
			}
			block := rest[:i+j]
			rest = rest[i+j:]
			ab, err := armor.Decode(bytes.NewReader(block))
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrKeyFormat, err)
			}
			if ab.Type != openpgp.PublicKeyType && ab.Type != openpgp.PrivateKeyType {
				return nil, fmt.Errorf("%w: a %s block, want a public or private key block", ErrKeyFormat, ab.Type)
			}
			el, err := readEntities(ab.Body)
			if err != nil {
				return nil, err
			}
			keys = append(keys, el...)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no keys found", ErrKeyFormat)
	}
	return keys, nil
}

// readEntities reads every key of a binary keyring. go-crypto's
// ReadKeyRing skips, without a word, a key it cannot read in full; so a
// copy of a trusted key carrying its revocation, made unreadable by one
// forged packet (anyone can add one on a keyserver that does not check
// what it stores), left an older, unrevoked copy to verify. Here a key
// whose primary key can be read must be read whole, or the keyring is
// refused, naming the key. A key whose primary key cannot be read (an
// algorithm go-crypto does not support) or cannot sign is skipped, as
// before: no copy of it could verify a signature.
//
// Byte-identical copies of a key (a keyring file holding one key 69,000
// times) are read once: the packets are framed here, cut into keys (each
// starting at a primary key packet), and a key block seen before is
// skipped, so that such a file costs a hash per copy, not a parse and a
// signature check. Framing this code does not follow (partial lengths,
// which key packets never use) leaves the whole to go-crypto.
func readEntities(r io.Reader) (openpgp.EntityList, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxKeyFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeyFormat, err)
	}
	blocks, ok := keyBlocks(data)
	if !ok {
		return readEntityPackets(bytes.NewReader(data))
	}
	seen := make(map[[sha256.Size]byte]bool)
	var el openpgp.EntityList
	for _, b := range blocks {
		sum := sha256.Sum256(b)
		if seen[sum] {
			continue
		}
		seen[sum] = true
		l, err := readEntityPackets(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		el = append(el, l...)
	}
	return el, nil
}

// keyBlocks cuts a binary keyring into its keys: the packets from one
// primary key packet (public or secret) to the next; packets before the
// first make a block of their own. ok is false when a packet's framing
// cannot be read (see packetLength).
func keyBlocks(data []byte) (blocks [][]byte, ok bool) {
	start := 0
	for p := 0; p < len(data); {
		n, tag, err := packetLength(data[p:])
		if err != nil {
			return nil, false
		}
		if (tag == 5 || tag == 6) && p > start {
			blocks = append(blocks, data[start:p])
			start = p
		}
		p += n
	}
	if start < len(data) {
		blocks = append(blocks, data[start:])
	}
	return blocks, true
}

// readEntityPackets reads every key of a binary keyring (see readEntities).
func readEntityPackets(r io.Reader) (openpgp.EntityList, error) {
	pr := packet.NewReader(r)
	var el openpgp.EntityList
	for {
		p, err := pr.Next()
		if err == io.EOF {
			return el, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrKeyFormat, err)
		}
		var pk *packet.PublicKey
		switch k := p.(type) {
		case *packet.PublicKey:
			if !k.IsSubkey {
				pk = k
			}
		case *packet.PrivateKey:
			if !k.IsSubkey {
				pk = &k.PublicKey
			}
		}
		if pk == nil {
			continue // the rest of a key that could not be read
		}
		pr.Unread(p)
		e, err := openpgp.ReadEntity(pr)
		switch {
		case err != nil && !pk.PubKeyAlgo.CanSign():
			continue
		case err != nil:
			return nil, fmt.Errorf("%w: a copy of key %X could not be read (%v): every copy of a trusted key must be readable, since any one may carry its revocation: remove that copy, or export the key again with 'gpg --export --armor %X'", ErrKeyFormat, pk.Fingerprint, err, pk.Fingerprint)
		}
		el = append(el, e)
	}
}

// fingerprint is e's primary key fingerprint in upper-case hex.
func fingerprint(e *openpgp.Entity) string { return fmt.Sprintf("%X", e.PrimaryKey.Fingerprint) }

// UserID is e's primary user ID, or "" if it has none.
func UserID(e *openpgp.Entity) string {
	if id := e.PrimaryIdentity(); id != nil {
		return id.Name
	}
	return ""
}

package trust

import (
	"bufio"
	"crypto"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/hint"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/internal/projectfs"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/signing"
)

// Options say whom to trust and what to require. A setting left at its
// zero value (nil, 0, "") is taken from the policy file, if any; one
// given replaces the policy's, as a command-line flag does.
type Options struct {
	// PolicyFile is a YAML policy (see ReadPolicy); its keyring paths are
	// relative to its folder.
	PolicyFile string
	// Keyrings are the trusted public keys: key files, or folders whose
	// every regular file (but hidden ones) holds keys.
	Keyrings []string
	// UntrustedKeyrings name signers only; they are never trusted.
	UntrustedKeyrings []string
	// MinSigners is how many distinct trusted keys must sign (nil: the
	// policy's, else 1); less than 1 is refused (ErrOption).
	MinSigners *int
	// RequireSigners are primary-key fingerprints that must sign.
	RequireSigners []string
	// Algorithms are the hashes allowed (SHA256, SHA384, SHA512; nil:
	// any that signing accepts).
	Algorithms []string
}

// A Trust is what Verify trusts and requires.
type Trust struct {
	// Trusted are the keys whose signatures count; Known the keys that
	// only name signers.
	Trusted, Known openpgp.EntityList
	// Policy is what the signatures must meet.
	Policy signing.Policy
	// Files are the key files read, in order.
	Files []string
	// PolicyFile is the policy read, nil when none was given.
	PolicyFile *PolicyFile
	// Provenance is what the assembly's provenance must say (the policy
	// file's provenance section); nil requires none.
	Provenance *provenance.Policy
}

// Load reads the policy file and the keyrings and checks that the policy
// can be met: every required signer is a trusted key, and there are as
// many trusted keys as signers required. Errors about the options are
// ErrOption (ErrNoKeyring when no keyring is given at all).
func Load(opts Options) (*Trust, error) {
	p := &PolicyFile{Has: map[string]bool{}}
	if opts.PolicyFile != "" {
		var err error
		if p, err = ReadPolicy(opts.PolicyFile); err != nil {
			return nil, err
		}
	}
	keyrings, untrusted, signers, algs := p.Keyrings, p.UntrustedKeyrings, p.RequireSigners, p.Algorithms
	if opts.Keyrings != nil {
		keyrings = opts.Keyrings
	}
	if opts.UntrustedKeyrings != nil {
		untrusted = opts.UntrustedKeyrings
	}
	if opts.RequireSigners != nil {
		signers = opts.RequireSigners
	}
	if opts.Algorithms != nil {
		algs = opts.Algorithms
	}
	min := max(p.MinSigners, 1)
	if opts.MinSigners != nil {
		if min = *opts.MinSigners; min < 1 {
			return nil, &errcode.FieldError{Field: "MinSigners", Value: strconv.Itoa(min), Reason: "at least 1 signature is always needed", Err: ErrOption}
		}
	}
	if len(keyrings) == 0 {
		return nil, errNoKeyring
	}
	t := &Trust{Policy: signing.Policy{MinSigners: min}}
	if opts.PolicyFile != "" {
		t.PolicyFile = p
	}
	var err error
	if t.Trusted, t.Files, err = ReadKeyrings("Keyrings", keyrings); err != nil {
		return nil, err
	}
	if len(untrusted) > 0 {
		if t.Known, _, err = ReadKeyrings("UntrustedKeyrings", untrusted); err != nil {
			return nil, err
		}
	}
	ring := signing.NewKeyring(t.Trusted)
	primaries := map[string]bool{}
	subkeys := map[string]string{}
	for _, e := range ring.Entities() {
		fp := fmt.Sprintf("%X", e.PrimaryKey.Fingerprint)
		primaries[fp] = true
		for _, sk := range e.Subkeys {
			subkeys[fmt.Sprintf("%X", sk.PublicKey.Fingerprint)] = fp
		}
	}
	for _, s := range signers {
		fp, err := signing.NormalizeFingerprint(s)
		if err != nil {
			return nil, &errcode.FieldError{Field: "RequireSigners", Value: s, Reason: err.Error(), Err: ErrOption}
		}
		if primary, ok := subkeys[fp]; ok {
			return nil, &errcode.FieldError{Field: "RequireSigners", Value: s, Reason: "it is a subkey: give its primary key's fingerprint, " + primary, Err: ErrOption}
		}
		if !primaries[fp] {
			return nil, hint.With(&errcode.FieldError{Field: "RequireSigners", Value: s, Reason: "no such key in the trusted keyrings, so it could never sign", Err: ErrOption},
				"add its public key to the trusted keyrings")
		}
		if !slices.Contains(t.Policy.Signers, fp) {
			t.Policy.Signers = append(t.Policy.Signers, fp)
		}
	}
	if min > ring.Len() {
		return nil, optionf("%d signers required, but the trusted keyrings hold only %s: the policy can never be met", min, plural.Count(ring.Len(), "key"))
	}
	for _, a := range algs {
		h, err := signing.ParseAlgorithm(a)
		var fe *errcode.FieldError
		if errors.As(err, &fe) {
			return nil, &errcode.FieldError{Field: "Algorithms", Value: fe.Value, Reason: fe.Reason, Err: ErrOption}
		}
		if !slices.Contains(t.Policy.Algorithms, h) {
			t.Policy.Algorithms = append(t.Policy.Algorithms, h)
		}
	}
	t.Provenance = p.Provenance
	return t, nil
}

// AlgorithmNames lists hashes by their attestation names.
func AlgorithmNames(hs []crypto.Hash) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, signing.AlgorithmName(h))
	}
	return out
}

// maxKeyringsSize bounds the key files one option reads in all (each
// file is bounded by signing.ReadKeys too): a keyring folder is a few
// release managers' keys, not a key server's dump.
var maxKeyringsSize int64 = 64 << 20

// ReadKeyrings reads the keys of each path: a key file, or a folder whose
// every regular file (but hidden ones; folders are skipped) is read as
// keys, in name order. A folder entry that is not a regular file (a FIFO,
// a device, a socket, or a link to one) is refused, naming it, before
// anything is read: reading it could hang or never end. A file named
// directly may be a pipe (--keyring <(gpg --export ...)). The files read
// add up to at most 64 MiB. option names the paths in messages (Load
// says "Keyrings"; a command line, its flag). It returns the keys and the
// files read.
func ReadKeyrings(option string, paths []string) (openpgp.EntityList, []string, error) {
	var all openpgp.EntityList
	var files []string
	var total int64
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, fileError(option, err)
		}
		names := []string{p}
		if st.IsDir() {
			ents, err := os.ReadDir(p)
			if err != nil {
				return nil, nil, fileError(option, err)
			}
			names = nil
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					continue
				}
				full := filepath.Join(p, e.Name())
				fi, err := os.Stat(full)
				if err != nil {
					return nil, nil, fileError(option, err)
				}
				if fi.IsDir() {
					continue
				}
				if !fi.Mode().IsRegular() {
					return nil, nil, hint.With(&FileError{option, full, &keyringError{fmt.Sprintf("not a regular file but %s", projectfs.Kind(fi.Mode())), ""}}, folderHint)
				}
				names = append(names, full)
			}
			sort.Strings(names)
			if len(names) == 0 {
				return nil, nil, hint.With(&FileError{option, p, &keyringError{"the folder holds no key files", ""}}, "put the trusted public keys in it, one or more per file ('gpg --export --armor KEYID > NAME.asc')")
			}
		}
		for _, name := range names {
			keys, n, err := readKeyFile(name, st.IsDir(), maxKeyringsSize-total)
			total += n
			if err != nil {
				var ke *keyringError
				if errors.As(err, &ke) {
					return nil, nil, hint.With(&FileError{option, name, err}, ke.hint)
				}
				var pe *fs.PathError
				if errors.As(err, &pe) {
					return nil, nil, fileError(option, err)
				}
				h := "export trusted keys with 'gpg --export --armor KEYID'"
				if st.IsDir() {
					h = "every file in a keyring folder must hold public keys: move other files out of it (hidden files are skipped)"
				}
				return nil, nil, hint.With(&FileError{option, name, err}, h)
			}
			all = append(all, keys...)
			files = append(files, name)
		}
	}
	return all, files, nil
}

// readKeyFile reads the keys of one file, at most left bytes of it. A
// file in a folder is opened as a project file is (projectfs.OpenFile:
// without blocking, and still a regular file once open, as it may have
// been swapped since it was listed).
func readKeyFile(name string, inFolder bool, left int64) (openpgp.EntityList, int64, error) {
	open := os.Open
	if inFolder {
		open = projectfs.OpenFile
	}
	f, err := open(name)
	if errors.Is(err, projectfs.ErrNotRegular) {
		return nil, 0, &keyringError{"not a regular file", folderHint}
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	cr := &limitio.Reader{R: io.LimitReader(f, left+1)}
	br := bufio.NewReader(cr)
	if head, _ := br.Peek(12); isKeybox(head) {
		return nil, cr.N, &keyringError{"a GnuPG keybox (pubring.kbx): keyboxes are not read",
			"export the trusted keys from it to a keyring: gpg --export --armor KEYID... > keyring.asc, then name keyring.asc in Options.Keyrings"}
	}
	keys, err := signing.ReadKeys(br)
	if cr.N > left {
		return nil, cr.N, &keyringError{fmt.Sprintf("the keyrings given hold more than %d MiB of keys", maxKeyringsSize>>20),
			"name fewer or smaller key files: export only the keys you trust ('gpg --export --armor KEYID')"}
	}
	return keys, cr.N, err
}

// isKeybox reports whether a file starts as a GnuPG keybox does (GnuPG
// 2.1 and later keep public keys in pubring.kbx): its first blob, the
// header blob, has type 1 at offset 4 and the magic "KBXf" at offset 8.
func isKeybox(head []byte) bool {
	return len(head) >= 12 && string(head[8:12]) == "KBXf"
}

// folderHint is the fix for a keyring folder entry that is not a file.
const folderHint = "a keyring folder holds key files only: move it out of the folder, or name it on its own in Options.Keyrings"

// fileError names the option whose file could not be read:
// "--keyring release.asc: no such file or directory".
func fileError(option string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &FileError{option, pe.Path, pe.Err}
	}
	return fmt.Errorf("%s: %w", option, err)
}

package signing

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/cloud-assembly/assemble/internal/gpgtest"
)

// The trust-agreement test: keys made by a real gpg (with faked times),
// put through the trust scenarios, signed both ways (by us, checked by gpg
// --verify; by gpg --clearsign, attached and checked by Verify), and the two
// verdicts compared under gpgVerdicts, the documented mapping from gpg's
// status lines to our sentinels. Where the two differ by design the case
// names the rule (agreeCase.design) and the test checks that the
// difference is exactly that one; any other difference is a bug.
//
//	gpg --verify status                our verdict (errors.Is)
//	GOODSIG                            nil (trusted)
//	EXPKEYSIG                          ErrKeyExpired; but nil when the key
//	                                   (and signing subkey) was valid at the
//	                                   signature's time and at the
//	                                   attestation's timestamp: gpg judges
//	                                   expiry now, we judge it then
//	                                   (designExpiredNow)
//	REVKEYSIG                          ErrKeyRevoked
//	GOODSIG after a "superseded" or    ErrKeyRevoked: we refuse any
//	"no longer used" revocation made   revocation, whatever its reason or
//	after the signature (some gpg      date (designAnyRevocation); gpg 2.2
//	versions)                          says REVKEYSIG here too
//	REVKEYSIG, or GOODSIG without the  ErrKeyFormat, from ReadKeys: go-crypto
//	revoker's key, for a key revoked   cannot read such a key, and a keyring
//	by a designated revoker            holding a copy that cannot be read in
//	                                   full is refused (designUnreadable)
//	EXPSIG (the signature's own        ErrSignatureExpired
//	expiration time has passed)
//	BADSIG                             ErrBadSignature
//	ERRSIG + NO_PUBKEY                 ErrUnknownSigner
//	ERRSIG rc 39 (time conflict: the   ErrKeyNotYetValid
//	key is newer than the signature)
//	ERRSIG rc 125 (wrong key usage: a  ErrUnknownSigner (the key may not
//	subkey not allowed to sign)        make signatures)
//	BADSIG ("unknown critical bit": a  ErrBadSignature, and ErrUnknownCritical
//	critical notation, gpg
//	--sig-notation '!name=value')
//	NO_PUBKEY (gpg skips, on import,   ErrUnknownSigner, and ErrUnknownCritical
//	a key whose self-signature holds
//	a critical notation: no valid
//	user ID)
//
// A user ID revoked while another remains revokes nothing, for either. (A
// signature over SHA-1, MD5 or RIPEMD-160 is ErrWeakSignatureHash where gpg
// 2.2 may say GOODSIG, by design too: TestWeVerifyGPGSignatures.)
// Signing agrees too: where gpg refuses to sign at the signing time (an
// expired, revoked or not yet existing key), so do we (ErrSignerExpired,
// ErrSignerRevoked, ErrNoSigningKey); there the signature both verify is
// made directly with go-crypto, bypassing our signer's refusal.
var gpgVerdicts = map[string]error{
	"GOODSIG":    nil,
	"EXPKEYSIG":  ErrKeyExpired,
	"REVKEYSIG":  ErrKeyRevoked,
	"EXPSIG":     ErrSignatureExpired,
	"BADSIG":     ErrBadSignature,
	"NO_PUBKEY":  ErrUnknownSigner,
	"ERRSIG/39":  ErrKeyNotYetValid,
	"ERRSIG/125": ErrUnknownSigner,
}

// The by-design differences from gpg.
const (
	designExpiredNow    = "expiry is judged at the signature's time and the attestation's timestamp, not now"
	designAnyRevocation = "any revocation refuses the key, whatever its reason or date"
	designUnreadable    = "a keyring holding a copy of a key that cannot be read in full (a revocation by a designated revoker) is refused"
)

// agreeBase is when the generated keys are made (gpg --faked-system-time).
var agreeBase = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

const agreeDay = 24 * time.Hour

// An agreeKit is a gpg home in which keys are generated at faked times.
type agreeKit struct {
	t    *testing.T
	home *gpgtest.Home
	n    int
}

// gpg runs gpg in the generating home at the faked time at (zero: now).
func (k *agreeKit) gpg(at time.Time, stdin []byte, args ...string) []byte {
	k.t.Helper()
	pre := []string{"--pinentry-mode", "loopback", "--passphrase", ""}
	if !at.IsZero() {
		pre = append(pre, "--faked-system-time", strconv.FormatInt(at.Unix(), 10)+"!")
	}
	out, err := k.home.Run(stdin, append(pre, args...)...)
	if err != nil {
		k.t.Fatalf("gpg %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// interactive runs gpg answering its prompts from answers (--command-fd;
// gen-revoke refuses --batch).
func (k *agreeKit) interactive(at time.Time, answers string, args ...string) []byte {
	k.t.Helper()
	cmd := exec.Command("gpg", append([]string{"--homedir", k.home.Dir, "--no-tty", "--yes", "--command-fd", "0",
		"--pinentry-mode", "loopback", "--passphrase", "",
		"--faked-system-time", strconv.FormatInt(at.Unix(), 10) + "!"}, args...)...)
	cmd.Stdin = strings.NewReader(answers)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		k.t.Fatalf("gpg %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

// genKey makes a key (primary usage "cert,sign", or "cert" with a signing
// subkey of the same algorithm when sub) created at at, with the given
// lifetimes (0: never expires), and returns its primary and signing key
// fingerprints.
func (k *agreeKit) genKey(name, algo string, at time.Time, sub bool, life, subLife time.Duration) (primary, signing string) {
	k.t.Helper()
	k.n++
	uid := fmt.Sprintf("%s <%s-%d@agree.test>", name, algo, k.n)
	usage := "cert,sign"
	if sub {
		usage = "cert"
	}
	k.gpg(at, nil, "--quick-gen-key", uid, algo, usage, expiry(life))
	fprs := k.fingerprints(uid)
	if sub {
		k.gpg(at.Add(time.Hour), nil, "--quick-add-key", fprs[0], subkeyAlgo(algo), "sign", expiry(subLife))
		fprs = k.fingerprints(uid)
		return fprs[0], fprs[1]
	}
	return fprs[0], fprs[0]
}

// subkeyAlgo is algo for a signing subkey: on the NIST and Brainpool
// curves gpg makes an ECDH subkey unless told ECDSA.
func subkeyAlgo(algo string) string {
	if strings.HasPrefix(algo, "nist") || strings.HasPrefix(algo, "brainpool") {
		return algo + "/ecdsa"
	}
	return algo
}

func agreeEntity(t *testing.T, key []byte) *openpgp.Entity {
	t.Helper()
	el, err := ReadKeys(bytes.NewReader(key))
	if err != nil {
		t.Fatal(err)
	}
	return el[0]
}

func expiry(d time.Duration) string {
	if d == 0 {
		return "never"
	}
	return fmt.Sprintf("seconds=%d", int64(d/time.Second))
}

func (k *agreeKit) fingerprints(id string) []string {
	var fprs []string
	for _, line := range strings.Split(string(k.gpg(time.Time{}, nil, "--with-colons", "--list-keys", id)), "\n") {
		if f := strings.Split(line, ":"); len(f) > 9 && f[0] == "fpr" {
			fprs = append(fprs, f[9])
		}
	}
	if len(fprs) == 0 {
		k.t.Fatalf("no key %s", id)
	}
	return fprs
}

func (k *agreeKit) public(fpr string) []byte {
	return k.gpg(time.Time{}, nil, "--armor", "--export", fpr)
}
func (k *agreeKit) secret(fpr string) []byte {
	return k.gpg(time.Time{}, nil, "--armor", "--export-secret-keys", fpr)
}

// revokeKey revokes the primary key at at with a revocation certificate
// (gen-revoke, then import), for reason 1 (compromised), 2 (superseded) or
// 3 (no longer used).
func (k *agreeKit) revokeKey(fpr string, at time.Time, reason int) {
	k.t.Helper()
	cert := k.interactive(at, fmt.Sprintf("y\n%d\n\ny\n", reason), "--armor", "--gen-revoke", fpr)
	k.gpg(time.Time{}, cert, "--import")
}

// revokeSubkey revokes the first subkey at at (--edit-key revkey).
func (k *agreeKit) revokeSubkey(fpr string, at time.Time, reason int) {
	k.t.Helper()
	k.interactive(at, fmt.Sprintf("key 1\nrevkey\ny\n%d\n\ny\nsave\n", reason), "--edit-key", fpr)
}

// An agreeCase is one scenario: a key as it was when it signed (secret),
// the keyring the verifier holds (key blocks, imported in this order), the
// signing time, and the verdicts expected of both tools.
type agreeCase struct {
	name    string
	signer  string        // fingerprint of the key (primary or subkey) that signs
	secret  []byte        // the secret key as exported at signing time
	keyring [][]byte      // what the verifier holds
	at      time.Time     // signing time
	tamper  bool          // change the signed text after signing
	sigLife time.Duration // the signature expires (gpg --default-sig-expire)
	// notation is a critical notation (name=value) both signatures carry
	// (gpg --sig-notation '!name=value'; go-crypto makes ours).
	notation string
	also     error // a second sentinel our verdict matches

	signs   bool  // both tools sign at `at`; else both refuse ...
	signErr error // ... we with this
	gpg     string
	want    error  // our verdict: nil or the sentinel
	design  string // the by-design rule when want differs from gpgVerdicts[gpg]
	// Another gpg status some GnuPG versions give, where we differ by the
	// design rule altDesign.
	alt, altDesign string
}

// TestGPGTrustAgreement: see gpgVerdicts.
func TestGPGTrustAgreement(t *testing.T) {
	start := time.Now()
	h := gpgtest.New(t, "")
	k := &agreeKit{t: t, home: h}
	b := buildZip(t)
	day := func(n int) time.Time { return agreeBase.Add(time.Duration(n) * agreeDay) }

	var cases []agreeCase
	add := func(c agreeCase) { cases = append(cases, c) }

	// Good keys by primary and by subkey, in every algorithm both gpg and
	// go-crypto have.
	for _, algo := range []string{"ed25519", "nistp256", "nistp384", "nistp521", "brainpoolP256r1", "brainpoolP384r1", "rsa2048", "dsa2048"} {
		// A gpg built without an algorithm (some lack Brainpool) skips it;
		// the three the brief names must exist.
		if _, err := h.Run(nil, "--pinentry-mode", "loopback", "--passphrase", "", "--quick-gen-key", "Probe <probe-"+algo+"@agree.test>", algo, "sign", "never"); err != nil {
			if algo == "ed25519" || algo == "nistp256" || algo == "rsa2048" {
				t.Fatalf("gpg cannot make an %s key: %v", algo, err)
			}
			t.Logf("skipping %s: this gpg cannot make such a key: %v", algo, err)
			continue
		}
		for _, sub := range []bool{false, true} {
			p, s := k.genKey("good", algo, day(0), sub, 0, 0)
			name := algo + "/primary"
			if sub {
				name = algo + "/subkey"
			}
			add(agreeCase{name: name, signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(10), signs: true, gpg: "GOODSIG"})
		}
	}

	for _, algo := range []string{"ed25519", "nistp256"} {
		c := func(name string) string { return algo + "/" + name }
		// A bad signature over changed text.
		p, s := k.genKey("tampered", algo, day(0), false, 0, 0)
		add(agreeCase{name: c("tampered"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(10), tamper: true, signs: true, gpg: "BADSIG", want: ErrBadSignature})

		// Expired now, valid when it signed: gpg says EXPKEYSIG, we accept.
		p, s = k.genKey("expired-now", algo, day(0), false, 365*agreeDay, 0)
		add(agreeCase{name: c("expired-now"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(10), signs: true, gpg: "EXPKEYSIG", want: nil, design: designExpiredNow})
		p, s = k.genKey("subkey-expired-now", algo, day(0), true, 0, 365*agreeDay)
		add(agreeCase{name: c("subkey-expired-now"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(10), signs: true, gpg: "EXPKEYSIG", want: nil, design: designExpiredNow})

		// Expired when it signed.
		p, s = k.genKey("expired", algo, day(0), false, 30*agreeDay, 0)
		add(agreeCase{name: c("expired-at-signing"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(60), signErr: ErrSignerExpired, gpg: "EXPKEYSIG", want: ErrKeyExpired})
		p, s = k.genKey("subkey-expired", algo, day(0), true, 0, 30*agreeDay)
		add(agreeCase{name: c("subkey-expired-at-signing"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(60), signErr: ErrSignerExpired, gpg: "EXPKEYSIG", want: ErrKeyExpired})

		// The primary key expired, its signing subkey did not.
		p, s = k.genKey("primary-expired", algo, day(0), true, 30*agreeDay, 0)
		add(agreeCase{name: c("primary-expired-subkey-not"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(60), signErr: ErrSignerExpired, gpg: "EXPKEYSIG", want: ErrKeyExpired})

		// Expiry shortened later, to a date after the signature: expired
		// now, valid when it signed.
		p, s = k.genKey("shortened", algo, day(0), false, 0, 0)
		before := k.secret(p)
		k.gpg(day(20), nil, "--quick-set-expire", p, "seconds="+strconv.Itoa(15*24*3600))
		add(agreeCase{name: c("expiry-shortened"), signer: s, secret: before, keyring: [][]byte{k.public(p)}, at: day(10), signs: true, gpg: "EXPKEYSIG", want: nil, design: designExpiredNow})

		// A signature that expired (its own lifetime, not its key's).
		p, s = k.genKey("sig-expired", algo, day(0), false, 0, 0)
		add(agreeCase{name: c("signature-expired"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(10), sigLife: agreeDay, signs: true, gpg: "EXPSIG", want: ErrSignatureExpired})

		// A signing subkey made after the signature's time.
		k.gpg(day(0), nil, "--quick-gen-key", "Subkey future <subkey-future-"+algo+"@agree.test>", algo, "cert", "never")
		p = k.fingerprints("subkey-future-" + algo + "@")[0]
		k.gpg(day(100), nil, "--quick-add-key", p, subkeyAlgo(algo), "sign", "never")
		s = k.fingerprints(p)[1]
		add(agreeCase{name: c("subkey-created-after-signature"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(10), signErr: ErrNoSigningKey, gpg: "ERRSIG/39", want: ErrKeyNotYetValid})

		// The primary user ID revoked, another remaining: the key is
		// known by that one (gpg cannot revoke the last user ID).
		p, s = k.genKey("uid-revoked", algo, day(0), false, 0, 0)
		k.gpg(day(1), nil, "--quick-add-uid", p, "Second <second-"+algo+"@agree.test>")
		before = k.secret(p)
		k.gpg(day(100), nil, "--quick-revuid", p, UserID(agreeEntity(t, k.public(p))))
		add(agreeCase{name: c("primary-uid-revoked"), signer: s, secret: before, keyring: [][]byte{k.public(p)}, at: day(10), signs: true, gpg: "GOODSIG"})

		// Revoked after the signature: the signing subkey, and the primary
		// key for a compromise and for a supersession.
		p, s = k.genKey("subkey-revoked", algo, day(0), true, 0, 0)
		before, unrevoked := k.secret(p), k.public(p)
		k.revokeSubkey(p, day(100), 1)
		add(agreeCase{name: c("subkey-revoked"), signer: s, secret: before, keyring: [][]byte{k.public(p)}, at: day(10), signs: true, gpg: "REVKEYSIG", want: ErrKeyRevoked})
		add(agreeCase{name: c("subkey-revoked/sign-after"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(110), signErr: ErrSignerRevoked, gpg: "REVKEYSIG", want: ErrKeyRevoked})
		add(agreeCase{name: c("subkey-revoked/old-copy-first"), signer: s, secret: before, keyring: [][]byte{unrevoked, k.public(p)}, at: day(10), signs: true, gpg: "REVKEYSIG", want: ErrKeyRevoked})
		add(agreeCase{name: c("subkey-revoked/old-copy-last"), signer: s, secret: before, keyring: [][]byte{k.public(p), unrevoked}, at: day(10), signs: true, gpg: "REVKEYSIG", want: ErrKeyRevoked})

		// A signing subkey's expiry extended before it came.
		p, s = k.genKey("subkey-extended", algo, day(0), true, 0, 30*agreeDay)
		old := k.public(p)
		k.gpg(day(20), nil, "--quick-set-expire", p, "never", s)
		ext := k.public(p)
		add(agreeCase{name: c("subkey-expiry-extended"), signer: s, secret: k.secret(p), keyring: [][]byte{ext}, at: day(60), signs: true, gpg: "GOODSIG"})
		add(agreeCase{name: c("subkey-expiry-extended/old-copy-first"), signer: s, secret: k.secret(p), keyring: [][]byte{old, ext}, at: day(60), signs: true, gpg: "GOODSIG"})
		add(agreeCase{name: c("subkey-expiry-extended/old-copy-last"), signer: s, secret: k.secret(p), keyring: [][]byte{ext, old}, at: day(60), signs: true, gpg: "GOODSIG"})
		add(agreeCase{name: c("subkey-expiry-extended/old-copy-only"), signer: s, secret: k.secret(p), keyring: [][]byte{old}, at: day(60), signs: true, gpg: "EXPKEYSIG", want: ErrKeyExpired})
		for _, r := range []struct {
			reason int
			name   string
		}{{1, "compromised"}, {2, "superseded"}, {3, "retired"}} {
			p, s = k.genKey("revoked-"+r.name, algo, day(0), false, 0, 0)
			old, before := k.public(p), k.secret(p)
			k.revokeKey(p, day(100), r.reason)
			revoked := k.public(p)
			add(agreeCase{name: c("revoked-" + r.name), signer: s, secret: before, keyring: [][]byte{revoked}, at: day(10), signs: true, gpg: "REVKEYSIG", want: ErrKeyRevoked,
				alt: map[int]string{2: "GOODSIG", 3: "GOODSIG"}[r.reason], altDesign: designAnyRevocation})
			if r.reason != 1 {
				continue
			}
			add(agreeCase{name: c("revoked-" + r.name + "/sign-after"), signer: s, secret: k.secret(p), keyring: [][]byte{revoked}, at: day(110), signErr: ErrSignerRevoked, gpg: "REVKEYSIG", want: ErrKeyRevoked})
			// The keyring holds the key twice, an old unrevoked copy
			// and the revoked one, in either order.
			add(agreeCase{name: c("revoked-" + r.name + "/old-copy-first"), signer: s, secret: before, keyring: [][]byte{old, revoked}, at: day(10), signs: true, gpg: "REVKEYSIG", want: ErrKeyRevoked})
			add(agreeCase{name: c("revoked-" + r.name + "/old-copy-last"), signer: s, secret: before, keyring: [][]byte{revoked, old}, at: day(10), signs: true, gpg: "REVKEYSIG", want: ErrKeyRevoked})
		}

		// A key revoked by its designated revoker: go-crypto cannot check
		// such a revocation and refuses to read the key, and an unreadable
		// copy of a trusted key refuses the whole keyring.
		k.gpg(day(0), nil, "--quick-gen-key", "Revoker <revoker-"+algo+"@agree.test>", algo, "cert,sign", "never")
		revoker := k.fingerprints("revoker-" + algo + "@")[0]
		params := fmt.Sprintf("%%no-protection\nKey-Type: %s\nKey-Curve: %s\nKey-Usage: sign,cert\nName-Real: Designated\nName-Email: designated-%s@agree.test\nRevoker: %d:%s\nExpire-Date: 0\n%%commit\n",
			map[string]string{"ed25519": "eddsa", "nistp256": "ecdsa"}[algo], algo, algo, map[string]int{"ed25519": 22, "nistp256": 19}[algo], revoker)
		k.gpg(day(0), []byte(params), "--gen-key")
		p = k.fingerprints("designated-" + algo + "@")[0]
		before = k.secret(p)
		cert := k.interactive(day(100), "y\n1\n\ny\n", "--local-user", revoker, "--armor", "--desig-revoke", p)
		k.gpg(time.Time{}, cert, "--import")
		// (gpg cannot check the revocation without the revoker's key:
		// GOODSIG.)
		add(agreeCase{name: c("revoked-by-designated-revoker"), signer: p, secret: before, keyring: [][]byte{k.public(p)}, at: day(10), signs: true, gpg: "GOODSIG", want: ErrKeyFormat, design: designUnreadable})
		add(agreeCase{name: c("revoked-by-designated-revoker/revoker-known"), signer: p, secret: before, keyring: [][]byte{k.public(p), k.public(revoker)}, at: day(10), signs: true, gpg: "REVKEYSIG", want: ErrKeyFormat, design: designUnreadable})

		// A key made after the signature's time.
		p, s = k.genKey("future", algo, day(100), false, 0, 0)
		add(agreeCase{name: c("created-after-signature"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(10), signErr: ErrNoSigningKey, gpg: "ERRSIG/39", want: ErrKeyNotYetValid})

		// A critical notation we do not know, in the signature (issue 19
		// item 2): gpg says BADSIG ("unknown critical bit").
		p, s = k.genKey("critical-notation", algo, day(0), false, 0, 0)
		add(agreeCase{name: c("critical-notation"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(10), notation: "critical@agree.test=1", signs: true, gpg: "BADSIG", want: ErrBadSignature, also: ErrUnknownCritical})
		// ... and in the key's self-signature (gpg --cert-notation): gpg
		// will neither sign with the key ("unusable secret key") nor
		// import it (no valid user ID), so it verifies nothing.
		out := k.gpg(day(0), nil, "--status-fd", "1", "--cert-notation", "!critical@agree.test=1", "--quick-gen-key", "Critical cert <critical-cert-"+algo+"@agree.test>", algo, "cert,sign", "never")
		p = statusField(t, out, "KEY_CREATED", 2)
		add(agreeCase{name: c("critical-cert-notation"), signer: p, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(10), signErr: ErrNoSigningKey, gpg: "NO_PUBKEY", want: ErrUnknownSigner, also: ErrUnknownCritical})

		// A key outside the keyring.
		p, s = k.genKey("untrusted", algo, day(0), false, 0, 0)
		other, _ := k.genKey("other", algo, day(0), false, 0, 0)
		add(agreeCase{name: c("untrusted"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(other)}, at: day(10), signs: true, gpg: "NO_PUBKEY", want: ErrUnknownSigner})

		// An expiry extended before it came: the newest self-signature
		// rules, whichever copy holds it; the old copy alone says expired.
		p, s = k.genKey("extended", algo, day(0), false, 30*agreeDay, 0)
		old = k.public(p)
		k.gpg(day(20), nil, "--quick-set-expire", p, "never")
		ext = k.public(p)
		add(agreeCase{name: c("expiry-extended"), signer: s, secret: k.secret(p), keyring: [][]byte{ext}, at: day(60), signs: true, gpg: "GOODSIG"})
		add(agreeCase{name: c("expiry-extended/old-copy-first"), signer: s, secret: k.secret(p), keyring: [][]byte{old, ext}, at: day(60), signs: true, gpg: "GOODSIG"})
		add(agreeCase{name: c("expiry-extended/old-copy-last"), signer: s, secret: k.secret(p), keyring: [][]byte{ext, old}, at: day(60), signs: true, gpg: "GOODSIG"})
		add(agreeCase{name: c("expiry-extended/old-copy-only"), signer: s, secret: k.secret(p), keyring: [][]byte{old}, at: day(60), signs: true, gpg: "EXPKEYSIG", want: ErrKeyExpired})

		// An expiry extended after it had lapsed: a signature made in the
		// lapse is judged by the newest self-signature, as gpg judges it.
		p, s = k.genKey("lapsed", algo, day(0), false, 30*agreeDay, 0)
		k.gpg(day(90), nil, "--quick-set-expire", p, "never")
		add(agreeCase{name: c("expiry-extended-after-lapse"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(60), signs: true, gpg: "GOODSIG"})

		// A signature by a subkey not allowed to sign (an RSA encryption
		// subkey; gpg cannot sign with it, nor can we).
		if algo == "ed25519" {
			k.gpg(day(0), nil, "--quick-gen-key", "Encrypt <encrypt@agree.test>", "rsa2048", "cert", "never")
			p = k.fingerprints("encrypt@agree.test")[0]
			k.gpg(day(0), nil, "--quick-add-key", p, "rsa2048", "encr", "never")
			s = k.fingerprints(p)[1]
			add(agreeCase{name: c("encryption-subkey"), signer: s, secret: k.secret(p), keyring: [][]byte{k.public(p)}, at: day(10), signErr: ErrNoSigningKey, gpg: "ERRSIG/125", want: ErrUnknownSigner})
		}
	}
	t.Logf("generated the keys in %v", time.Since(start).Round(time.Millisecond))

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got, ok := gpgVerdicts[c.gpg]; !ok {
				t.Fatalf("gpg status %s is not in the mapping", c.gpg)
			} else if (got != c.want) != (c.design != "") {
				t.Fatalf("we say %v where gpg says %s (mapped to %v): a difference must name its design rule, and only a difference", c.want, c.gpg, got)
			}
			if c.alt != "" && (gpgVerdicts[c.alt] == c.want || c.altDesign == "") {
				t.Fatalf("the alternative gpg status %s must differ from our verdict by a design rule", c.alt)
			}
			k.check(t, b, c)
		})
	}
	t.Logf("%d cases in %v", len(cases), time.Since(start).Round(time.Millisecond))
}

// check signs b both ways (or checks that both refuse), then verifies each
// signature with both tools.
func (k *agreeKit) check(t *testing.T, b []byte, c agreeCase) {
	now := func() time.Time { return c.at }
	secret, err := ReadKeys(bytes.NewReader(c.secret))
	if err != nil {
		t.Fatalf("reading the key gpg exported: %v", err)
	}
	var trusted openpgp.EntityList
	var keyringErr error
	for _, kb := range c.keyring {
		el, err := ReadKeys(bytes.NewReader(kb))
		if err != nil && keyringErr == nil {
			keyringErr = err
		}
		trusted = append(trusted, el...)
	}
	if keyringErr != nil && !errors.Is(keyringErr, c.want) {
		t.Fatalf("reading the keyring: %v", keyringErr)
	}
	a, err := Attest(t.Context(), reader(t, b), &SignOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := a.Marshal()
	signed := map[string][]byte{}

	// (1) We sign (our signer makes no expiring signatures: go-crypto
	// makes that one).
	var ours bytes.Buffer
	_, err = Seal(context.Background(), &ours, reader(t, b), []Signer{Keys(secret[0])}, &SignOptions{Now: now})
	switch {
	case c.sigLife != 0 || c.notation != "":
		signed["go-crypto"] = agreeRawSign(t, a, secret[0], c.signer, c.at, c.sigLife, "!"+c.notation)
	case c.signs && err != nil:
		t.Fatalf("we refuse to sign: %v", err)
	case !c.signs && !errors.Is(err, c.signErr):
		t.Fatalf("we sign: got %v, want %v", err, c.signErr)
	case c.signs:
		signed["ours"] = signatureOf(t, ours.Bytes())
	}

	// (2) gpg signs (in the generating home, where the key is as it is
	// now: a secret key revoked since cannot sign at all).
	gpgHome := k.home
	if !bytes.Equal(c.secret, k.secret(c.signer)) {
		// The key has changed since (revoked): gpg signs with the key
		// as exported at signing time, in a home of its own.
		gpgHome = gpgtest.New(t, "")
		if _, err := gpgHome.Run(c.secret, "--import"); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--faked-system-time", strconv.FormatInt(c.at.Unix(), 10) + "!", "--local-user", c.signer + "!", "--clearsign"}
	if c.sigLife != 0 {
		args = append(args, "--default-sig-expire", expiry(c.sigLife))
	}
	if c.notation != "" {
		args = append(args, "--sig-notation", "!"+c.notation)
	}
	sig, err := gpgHome.Run(body, args...)
	switch {
	case c.signs && err != nil:
		t.Fatalf("gpg refuses to sign: %v", err)
	case !c.signs && err == nil:
		t.Fatalf("gpg signs where we refuse (%v)", c.signErr)
	case c.signs:
		signed["gpg"] = sig
	}
	if !c.signs {
		// Both refuse: the signature is made directly, to be judged.
		signed["go-crypto"] = agreeRawSign(t, a, secret[0], c.signer, c.at, 0, "!"+c.notation)
	}

	verifyHome := t.TempDir()
	os.Chmod(verifyHome, 0o700)
	for _, kb := range c.keyring {
		if out, err := agreeRun(verifyHome, kb, "--import"); err != nil {
			t.Fatalf("gpg --import: %v\n%s", err, out)
		}
	}
	for who, sig := range signed {
		if c.tamper {
			// Same JSON, other signed text.
			sig = bytes.Replace(sig, []byte("\n  \""), []byte("\n   \""), 1)
		}
		// gpg's verdict.
		p := filepath.Join(t.TempDir(), "signature.asc")
		os.WriteFile(p, sig, 0o644)
		out, _ := agreeRun(verifyHome, nil, "--trust-model", "always", "--status-fd", "1", "--verify", p)
		status := agreeStatus(string(out))
		if status != c.gpg && (c.alt == "" || status != c.alt) {
			t.Errorf("%s signature: gpg says %s, want %s\n%s", who, status, c.gpg, out)
		}
		// Ours: attached as sign --signature does it (then), and verified
		// now.
		var sealed bytes.Buffer
		if _, err := Seal(t.Context(), &sealed, reader(t, b), nil, &SignOptions{Signature: sig, Now: now}); err != nil {
			if c.also != nil && errors.Is(err, c.want) && errors.Is(err, c.also) {
				continue // refused already when attached
			}
			t.Fatalf("%s signature: attaching: %v", who, err)
		}
		err := keyringErr
		if err == nil {
			_, err = Verify(context.Background(), reader(t, sealed.Bytes()), trusted, nil)
		}
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s signature: Verify: got %v, want %v (gpg: %s)", who, err, c.want, status)
		}
		if c.also != nil && !errors.Is(err, c.also) {
			t.Errorf("%s signature: Verify: got %v, want it to match %v too", who, err, c.also)
		}
	}
}

// statusField is field i (1: the keyword) of gpg's first status line with
// the keyword.
func statusField(t *testing.T, out []byte, keyword string, i int) string {
	t.Helper()
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > i+1 && f[0] == "[GNUPG:]" && f[1] == keyword {
			return f[i+1]
		}
	}
	t.Fatalf("no %s status line in %s", keyword, out)
	return ""
}

// agreeStatus is the verdict of gpg --verify's status lines: the first of
// GOODSIG, EXPKEYSIG, REVKEYSIG, EXPSIG, BADSIG and NO_PUBKEY, else ERRSIG
// with its reason code (ERRSIG/39: time conflict, the key is newer than the
// signature; ERRSIG/125: wrong key usage).
func agreeStatus(out string) string {
	for _, s := range []string{"GOODSIG", "EXPKEYSIG", "REVKEYSIG", "EXPSIG", "BADSIG", "NO_PUBKEY"} {
		if strings.Contains(out, "[GNUPG:] "+s+" ") {
			return s
		}
	}
	for _, line := range strings.Split(out, "\n") {
		// ERRSIG <keyid> <pkalgo> <hashalgo> <class> <time> <rc> [<fpr>]
		if f := strings.Fields(line); len(f) >= 8 && f[1] == "ERRSIG" {
			return "ERRSIG/" + f[7]
		}
	}
	return "none"
}

// agreeRun runs gpg in a home without an agent (verification needs none).
func agreeRun(home string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("gpg", append([]string{"--homedir", home, "--batch", "--yes", "--no-autostart"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return append(out.Bytes(), errb.Bytes()...), err
}

// agreeRawSign clear-signs the attestation with the key of e whose
// fingerprint is fpr, at the time at, with no trust check at all.
func agreeRawSign(t *testing.T, a *Attestation, e *openpgp.Entity, fpr string, at time.Time, life time.Duration, notation string) []byte {
	t.Helper()
	k := e.PrivateKey
	for _, sk := range e.Subkeys {
		if fmt.Sprintf("%X", sk.PublicKey.Fingerprint) == fpr {
			k = sk.PrivateKey
		}
	}
	body, _ := a.Marshal()
	var buf bytes.Buffer
	config := &packet.Config{DefaultHash: crypto.SHA256, Time: func() time.Time { return at }, SigLifetimeSecs: uint32(life / time.Second)}
	// A notation "name=value", critical when it starts with "!" (as gpg
	// --sig-notation has it).
	critical := strings.HasPrefix(notation, "!")
	if name, value, ok := strings.Cut(strings.TrimPrefix(notation, "!"), "="); ok {
		config.SignatureNotations = []*packet.Notation{{Name: name, Value: []byte(value), IsCritical: critical, IsHumanReadable: true}}
	}
	w, err := clearsign.Encode(&buf, k, config)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bytes.TrimSuffix(body, []byte("\n")))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := addArmorChecksum(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A signature whose own expiration time (set by its signer, gpg
// --default-sig-expire) has passed is refused, as gpg --verify says EXPSIG;
// before then it verifies. Without gpg: TestGPGTrustAgreement checks the
// same against gpg.
func TestSignatureExpiry(t *testing.T) {
	e := signer(t, "ed25519.sec.asc")
	trusted := readKeys(t, "trusted.asc")
	b := buildZip(t)
	at := created.Add(10 * agreeDay)
	a, err := Attest(t.Context(), reader(t, b), &SignOptions{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	sig := agreeRawSign(t, a, e, fingerprint(e), at, agreeDay, "")
	var sealed bytes.Buffer
	if _, err := Seal(t.Context(), &sealed, reader(t, b), nil, &SignOptions{Signature: sig, Now: func() time.Time { return at }}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		now  time.Time
		want error
	}{
		{at.Add(time.Hour), nil},
		{at.Add(agreeDay), nil},
		{at.Add(agreeDay + time.Second), ErrSignatureExpired},
		{time.Now(), ErrSignatureExpired},
	} {
		_, err := Verify(context.Background(), reader(t, sealed.Bytes()), trusted, &VerifyOptions{Now: func() time.Time { return tt.now }})
		if tt.want == nil && err != nil || !errors.Is(err, tt.want) || tt.want != nil && !errors.Is(err, ErrVerification) {
			t.Errorf("at %s: got %v, want %v", day(tt.now), err, tt.want)
		}
	}
	// It is one signature's verdict: that signature is not trusted.
	var serr *SignaturesError
	if _, err := Verify(context.Background(), reader(t, sealed.Bytes()), trusted, nil); !errors.As(err, &serr) || serr.Signatures[0].Trusted || !errors.Is(serr.Signatures[0].Err, ErrSignatureExpired) {
		t.Errorf("the expired signature's own verdict: %v", err)
	}
	// Attaching it once expired, under a keyring, is refused too (without
	// one no signature is judged).
	if _, err := Seal(t.Context(), io.Discard, reader(t, b), nil, &SignOptions{Signature: sig, Keyring: trusted}); !errors.Is(err, ErrSignatureExpired) {
		t.Errorf("attaching an expired signature: got %v, want ErrSignatureExpired", err)
	}
}

package signing_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/signing"
)

func ExampleVerify() {
	keys := filepath.Join("..", "fixtures", "keys")
	read := func(name string) []byte { b, _ := os.ReadFile(filepath.Join(keys, name)); return b }

	// An unsigned assembly with one file.
	var unsigned bytes.Buffer
	zw := zip.NewWriter(&unsigned)
	w, _ := zw.Create("manifest.json")
	w.Write([]byte(`{"schema": "cloud-assembly/1.0", "droplets": {}}`))
	zw.Close()
	r, _ := assembly.NewReader(bytes.NewReader(unsigned.Bytes()), int64(unsigned.Len()))

	// Seal it with the one secret key of a key file.
	signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join(keys, "ed25519.sec.asc")})
	if err != nil {
		fmt.Println(err)
		return
	}
	var signed bytes.Buffer
	if _, err := signing.Seal(context.Background(), &signed, r, signers, nil); err != nil {
		fmt.Println(err)
		return
	}

	// Verify it, then read a file through the verified result.
	trusted, _ := signing.ReadKeys(bytes.NewReader(read("trusted.asc")))
	sr, err := assembly.NewReader(bytes.NewReader(signed.Bytes()), int64(signed.Len()))
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := signing.Verify(context.Background(), sr, trusted, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, _ := v.ReadFile("manifest.json")
	fmt.Println(v.UserID())
	fmt.Println(v.Files(), len(m), "bytes")
	// Output:
	// Test Signer Ed25519 <ed25519@example.test>
	// [manifest.json] 48 bytes
}

// LoadSigners chooses a key of a key file by its fingerprint and unlocks it
// with a passphrase from an environment variable, or else from a prompt
// (a terminal's, in the assemble command).
func ExampleLoadSigners() {
	signers, err := signing.LoadSigners(&signing.SignerOptions{
		KeyFile:       filepath.Join("..", "fixtures", "keys", "passphrase.sec.asc"),
		LocalUsers:    []string{"passphrase@example.test"},
		PassphraseEnv: "EXAMPLE_PASSPHRASE", // unset here
		Prompt: func(key *openpgp.Entity) ([]byte, error) {
			fmt.Printf("passphrase for %q\n", signing.UserID(key))
			return []byte("correct horse battery staple"), nil
		},
	})
	fmt.Println(len(signers), err)
	// Output:
	// passphrase for "Test Signer Passphrase <passphrase@example.test>"
	// 1 <nil>
}

// Two keys sign one assembly: the first seals it, the second co-signs
// (SignOptions.Add), and Verify asks for both (Policy.MinSigners).
func ExampleSeal_cosign() {
	keys := filepath.Join("..", "fixtures", "keys")
	w := assembly.NewWriter(assembly.WriterOptions{})
	w.AddBytes("manifest.json", []byte(`{"schema": "cloud-assembly/1.0", "droplets": {}}`))
	var unsigned bytes.Buffer
	w.WriteTo(context.Background(), &unsigned)

	seal := func(in []byte, key string, opts *signing.SignOptions) []byte {
		signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join(keys, key)})
		if err != nil {
			panic(err)
		}
		r, err := assembly.NewReader(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			panic(err)
		}
		var out bytes.Buffer
		if _, err := signing.Seal(context.Background(), &out, r, signers, opts); err != nil {
			panic(err)
		}
		return out.Bytes()
	}
	once := seal(unsigned.Bytes(), "ed25519.sec.asc", nil)
	twice := seal(once, "rsa3072.sec.asc", &signing.SignOptions{Add: true})

	trusted, _ := os.ReadFile(filepath.Join(keys, "trusted.asc"))
	ring, _ := signing.ReadKeys(bytes.NewReader(trusted))
	for _, b := range [][]byte{once, twice} {
		r, _ := assembly.NewReader(bytes.NewReader(b), int64(len(b)))
		_, err := signing.Verify(context.Background(), r, ring, &signing.VerifyOptions{Policy: signing.Policy{MinSigners: 2}})
		fmt.Println(errors.Is(err, signing.ErrThreshold), err == nil)
	}
	// Output:
	// true false
	// false true
}

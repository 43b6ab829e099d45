package provenance

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/limitio"
)

// ErrKey is a key file that holds no key assemble can sign or verify
// bundles with.
var ErrKey = errcode.New("provenance_key", "not a usable bundle key",
	"give a PEM file of an Ed25519 or ECDSA (P-256, P-384, P-521) key: 'openssl genpkey -algorithm ed25519' makes one, 'openssl pkey -pubout' its public half")

// maxKeyFile bounds a key file: a PEM key is a few hundred bytes.
const maxKeyFile = 64 << 10

// ReadPublicKey reads a PEM public key (PUBLIC KEY, PKIX) from file: an
// Ed25519 or ECDSA key.
func ReadPublicKey(file string) (crypto.PublicKey, error) {
	data, err := limitio.ReadFile(file, maxKeyFile)
	if err != nil {
		return nil, err
	}
	return ParsePublicKey(file, data)
}

// ParsePublicKey parses a PEM public key; name is what errors call it.
func ParsePublicKey(name string, data []byte) (crypto.PublicKey, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("%w: %s: no PEM PUBLIC KEY block", ErrKey, name)
	}
	k, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrKey, name, err)
	}
	switch k.(type) {
	case ed25519.PublicKey, *ecdsa.PublicKey:
		return k, nil
	}
	return nil, fmt.Errorf("%w: %s: a %T key (Ed25519 and ECDSA are supported)", ErrKey, name, k)
}

// ParsePrivateKey parses a PEM private key (PKCS #8 PRIVATE KEY, or SEC 1
// EC PRIVATE KEY): an Ed25519 or ECDSA key. name is what errors call it;
// the key's bytes never appear in an error.
func ParsePrivateKey(name string, data []byte) (crypto.Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, fmt.Errorf("%w: %s: no PEM block", ErrKey, name)
	}
	var k any
	var err error
	switch b.Type {
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(b.Bytes)
	default:
		return nil, fmt.Errorf("%w: %s: a PEM %q block, want PRIVATE KEY (an encrypted key must be decrypted first: openssl pkey -in KEY -out PLAIN)", ErrKey, name, b.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: the key does not parse", ErrKey, name)
	}
	switch k := k.(type) {
	case ed25519.PrivateKey:
		return k, nil
	case *ecdsa.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("%w: %s: a %T key (Ed25519 and ECDSA are supported)", ErrKey, name, k)
}

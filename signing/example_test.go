package signing_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

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

	// Sign it.
	secret, _ := signing.ReadKeys(bytes.NewReader(read("ed25519.sec.asc")))
	signer, err := signing.SelectSigner(secret, nil, time.Now())
	if err != nil {
		fmt.Println(err)
		return
	}
	var signed bytes.Buffer
	if _, err := signing.Sign(&signed, r, signer, nil); err != nil {
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
	v, err := signing.Verify(sr, trusted, nil)
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

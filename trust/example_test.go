package trust_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/signing"
	"github.com/cloud-assembly/assemble/trust"
)

// Open a signed assembly (a file here; a location reads the same), then
// read a file of it through the verified handle.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	app := filepath.Join(dir, "app.cloud")
	if err := buildAndSign(app); err != nil {
		fmt.Println(err)
		return
	}

	t, err := trust.Load(trust.Options{Keyrings: []string{filepath.Join("..", "fixtures", "keys", "trusted.asc")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := trust.Open(context.Background(), app, t, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	m, err := a.ReadFile("manifest.json")
	fmt.Println(a.Authenticated(), a.Result().Verified.UserID())
	fmt.Println(a.Files(), len(m), "bytes", err)
	// Output:
	// true Test Signer Ed25519 <ed25519@example.test>
	// [manifest.json] 48 bytes <nil>
}

// buildAndSign writes an assembly of one manifest, signed with the
// ed25519 test key, to path.
func buildAndSign(path string) error {
	w := assembly.NewWriter(assembly.WriterOptions{})
	w.AddBytes("manifest.json", []byte(`{"schema": "cloud-assembly/1.0", "droplets": {}}`))
	unsigned := path + ".unsigned"
	if err := w.WriteFile(context.Background(), unsigned); err != nil {
		return err
	}
	signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join("..", "fixtures", "keys", "ed25519.sec.asc")})
	if err != nil {
		return err
	}
	_, err = signing.SealFile(context.Background(), unsigned, path, signers, nil)
	return err
}

// Verify an assembly and write its files to a folder: only what verified
// is written, each file checked again as it is, and the folder appears
// whole or not at all. The result is what `assemble extract --json`
// prints.
func ExampleAssembly_Extract() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	app := filepath.Join(dir, "app.cloud")
	if err := buildAndSign(app); err != nil {
		fmt.Println(err)
		return
	}

	t, err := trust.Load(trust.Options{Keyrings: []string{filepath.Join("..", "fixtures", "keys", "trusted.asc")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := trust.Open(context.Background(), app, t, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	res, err := a.Extract(context.Background(), filepath.Join(dir, "out"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Files, "file,", res.Authenticated, res.Signer.UserID)
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	// Output:
	// 1 file, true Test Signer Ed25519 <ed25519@example.test>
	// manifest.json
	// signature.asc
}

// The verdict of a failed verification says what was learnt, as `assemble
// verify --json` prints it beside the error.
func ExampleVerifyError_Verdict() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	app := filepath.Join(dir, "app.cloud")
	if err := buildAndSign(app); err != nil {
		fmt.Println(err)
		return
	}
	// Trust another key than the one that signed.
	t, err := trust.Load(trust.Options{Keyrings: []string{filepath.Join("..", "fixtures", "keys", "rsa3072.pub.asc")}})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = trust.Open(context.Background(), app, t, nil)
	var ve *trust.VerifyError
	if errors.As(err, &ve) {
		v := ve.Verdict()
		fmt.Println(errors.Is(err, signing.ErrUnknownSigner), v.Valid, v.Signed, v.Signatures[0].Code, v.Policy.Met)
	}
	// Output:
	// true false true unknown_signer false
}

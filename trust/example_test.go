package trust_test

import (
	"context"
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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cdk"
	"github.com/cloud-assembly/assemble/trust"
)

// Issue 29 item 2: verify's and extract's --json are the library's values
// marshalled, so a Go program gets the same data: the command's output is
// byte for byte the encoding of what trust returns for the same assembly,
// and a refusal's fields beside "error" are the VerifyError's.
func TestCLIJSONIsTheLibrarys(t *testing.T) {
	dir := t.TempDir()
	keys, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys"))
	webapp, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "examples", "webapp"))
	unsigned, signed := filepath.Join(dir, "unsigned.cloud"), filepath.Join(dir, "signed.cloud")
	cli := func(args ...string) ([]byte, int) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"assemble"}, args...), nil, &out, &errb)
		return out.Bytes(), code
	}
	for _, args := range [][]string{{"build", "-q", "-o", unsigned, webapp}, {"sign", "-q", "--key", filepath.Join(keys, "ed25519.sec.asc"), "-o", signed, unsigned}} {
		if _, code := cli(args...); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
	}
	encode := func(v any) []byte {
		var b bytes.Buffer
		if err := encodeJSON(&b, v); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	keyring := filepath.Join(keys, "trusted.asc")
	tr, err := trust.Load(trust.Options{Keyrings: []string{keyring}})
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name string
		file string
		args []string
		opts *trust.OpenOptions
	}{
		{"signed", signed, []string{"--keyring", keyring}, nil},
		{"unsigned", unsigned, []string{"--allow-unsigned"}, &trust.OpenOptions{InsecureAllowUnsigned: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, code := cli(append(append([]string{"verify", "--json"}, c.args...), c.file)...)
			lt := tr
			if c.opts != nil {
				lt = nil
			}
			a, err := trust.Open(context.Background(), c.file, lt, c.opts)
			if err != nil || code != 0 {
				t.Fatalf("exit %d, Open: %v", code, err)
			}
			defer a.Close()
			if want := encode(a.Verdict()); !bytes.Equal(got, want) {
				t.Errorf("verify --json:\n%s\nthe library's verdict:\n%s", got, want)
			}
			for _, cdkOut := range []bool{false, true} {
				if cdkOut && c.name == "unsigned" {
					continue
				}
				flag, opts := "-d", &trust.ExtractOptions{}
				if cdkOut {
					flag, opts.Layout = "--cdk-out", cdk.OutFiles
				}
				cliDir, libDir := filepath.Join(t.TempDir(), "x"), filepath.Join(t.TempDir(), "x")
				got, code := cli(append(append([]string{"extract", "--json", flag, cliDir}, c.args...), c.file)...)
				res, err := a.Extract(context.Background(), libDir, opts)
				if cdkOut {
					// webapp is not built from a cdk.out: both refuse it.
					var le *trust.LayoutError
					if code != 1 || !errors.As(err, &le) {
						t.Errorf("--cdk-out: exit %d, Extract: %v", code, err)
					}
					continue
				}
				if err != nil || code != 0 {
					t.Fatalf("exit %d, Extract: %v", code, err)
				}
				res.Dir = cliDir
				if want := encode(res); !bytes.Equal(got, want) {
					t.Errorf("extract --json:\n%s\nthe library's result:\n%s", got, want)
				}
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		other := filepath.Join(keys, "rsa3072.pub.asc")
		got, code := cli("verify", "--json", "--keyring", other, signed)
		ot, err := trust.Load(trust.Options{Keyrings: []string{other}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = trust.Open(context.Background(), signed, ot, nil)
		var ve *trust.VerifyError
		if code != 1 || !errors.As(err, &ve) {
			t.Fatalf("exit %d, Open: %v", code, err)
		}
		var cliObj, libObj map[string]any
		if err := json.Unmarshal(got, &cliObj); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(encode(ve), &libObj); err != nil {
			t.Fatal(err)
		}
		if _, ok := cliObj["error"]; !ok {
			t.Fatalf("no error in %s", got)
		}
		delete(cliObj, "error")
		if !reflect.DeepEqual(cliObj, libObj) {
			t.Errorf("verify --json beside its error:\n%v\nthe library's refusal:\n%v", cliObj, libObj)
		}
	})
}

package signing

import (
	"bytes"
	"crypto"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zip"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "re-sign the vectors in testdata/vectors")

// vectorTime is when the vectors were signed (fixed, so -update is stable
// apart from the keys fixtures/keys/gen.sh makes).
var vectorTime = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// expectations map a vector's "expect:" line to the sentinel it must give.
var expectations = map[string]error{
	"success":          nil,
	"bad signature":    ErrBadSignature,
	"unknown signer":   ErrUnknownSigner,
	"digest mismatch":  ErrDigestMismatch,
	"size mismatch":    ErrSizeMismatch,
	"unsigned content": ErrUnsignedContent,
	"unlisted file":    ErrUnlisted,
	"missing file":     ErrMissing,
}

// TestVectors runs signing/testdata/vectors/*.txtar. A vector's comment has
//
//	expect: one of the keys of expectations
//	signer: a secret key file in fixtures/keys
//	after:  what to do after signing (optional): "swap NAME" replaces NAME
//	        by the section "swap/NAME"; "drop NAME" removes it; "prefix" and
//	        "suffix" add text around signature.asc; "edit" changes a size in
//	        its signed text
//
// The other sections are the assembly's files, in archive order; the
// signature.asc section is written by `go test ./signing -run TestVectors
// -update`, which signs the files (before "after") at vectorTime.
func TestVectors(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "vectors", "*.txtar"))
	if len(paths) == 0 {
		t.Fatal("no vectors in testdata/vectors")
	}
	trusted := readKeys(t, "trusted.asc")
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			meta := map[string]string{}
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok {
					meta[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			want, ok := expectations[meta["expect"]]
			if !ok {
				t.Fatalf("unknown expect: %q", meta["expect"])
			}
			if *update {
				e := signer(t, meta["signer"])
				body := zipOfSections(t, ar.Files, nil)
				signed := signZip(t, body, e, vectorTime, crypto.SHA256)
				sig := signatureOf(t, signed)
				var files []txtar.File
				for _, f := range ar.Files {
					if f.Name != "signature.asc" {
						files = append(files, f)
					}
				}
				ar.Files = append(files, txtar.File{Name: "signature.asc", Data: sig})
				if err := os.WriteFile(p, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b := zipOfSections(t, ar.Files, strings.Fields(meta["after"]))
			err = openAndVerify(t, b, trusted)
			if want == nil {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				return
			}
			if !errors.Is(err, want) || !errors.Is(err, ErrVerification) {
				t.Fatalf("got %v, want %v", err, want)
			}
		})
	}
}

// zipOfSections builds the assembly from the txtar sections, applying the
// "after" edit when given (nil: the files as signed, without signature.asc).
func zipOfSections(t *testing.T, files []txtar.File, after []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	swaps := map[string][]byte{}
	for _, f := range files {
		if name, ok := strings.CutPrefix(f.Name, "swap/"); ok {
			swaps[name] = f.Data
		}
	}
	for _, f := range files {
		if strings.HasPrefix(f.Name, "swap/") || (after == nil && f.Name == "signature.asc") {
			continue
		}
		data := f.Data
		if len(after) == 2 && after[1] == f.Name {
			switch after[0] {
			case "swap":
				data = swaps[f.Name]
			case "drop":
				continue
			}
		}
		if f.Name == "signature.asc" && len(after) == 1 {
			switch after[0] {
			case "prefix":
				data = append([]byte("This assembly is safe.\n"), data...)
			case "suffix":
				data = append(append([]byte{}, data...), "\nThis assembly is safe.\n"...)
			case "edit":
				data = bytes.Replace(data, []byte(`"size": "47"`), []byte(`"size": "48"`), 1)
			}
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

package signing

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand"
	"testing"
	"time"

	"github.com/klauspost/compress/zip"
)

// benchZip is an assembly of n small text files plus one stored blob of
// blobMiB random MiB. bench/verify.sh runs the same comparison at full size
// against unzip and openssl.
func benchZip(b *testing.B, n, blobMiB int) []byte {
	b.Helper()
	rng := rand.New(rand.NewSource(1))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("manifest.json")
	w.Write([]byte(`{"schema":"cloud-assembly/1.0","droplets":{}}`))
	for i := 0; i < n; i++ {
		w, _ := zw.Create(fmt.Sprintf("templates/d%03d/t%05d.yaml", i/100, i))
		for j := 0; j < 20+rng.Intn(60); j++ {
			fmt.Fprintf(w, "Resource%d:\n  Type: AWS::S3::Bucket\n  Name: bucket-%d\n", j, rng.Int63())
		}
	}
	if blobMiB > 0 {
		blob := make([]byte, blobMiB<<20)
		rng.Read(blob)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "images/blob.bin", Method: zip.Store})
		w.Write(blob)
	}
	zw.Close()
	return buf.Bytes()
}

func BenchmarkVerify(b *testing.B) {
	data := signZip(b, benchZip(b, 2000, 64), signer(b, "ed25519.sec.asc"), time.Now(), crypto.SHA256)
	trusted := readKeys(b, "trusted.asc")
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Verify(context.Background(), reader(b, data), trusted, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSign(b *testing.B) {
	data := benchZip(b, 2000, 64)
	e := signer(b, "ed25519.sec.asc")
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Seal(context.Background(), io.Discard, reader(b, data), []Signer{Keys(e)}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHashStored is our streaming hash of one stored entry;
// BenchmarkSHA256Plain is sha256 over the same bytes in one call (the floor).
func BenchmarkHashStored(b *testing.B) {
	data := benchZip(b, 0, 256)
	f := reader(b, data).File("images/blob.bin")
	b.SetBytes(f.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := hashEntry(b.Context(), f, crypto.SHA256, make([]byte, 32), f.Size()+1, nil, false); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSHA256Plain(b *testing.B) {
	blob := make([]byte, 256<<20)
	b.SetBytes(int64(len(blob)))
	for i := 0; i < b.N; i++ {
		sha256.Sum256(blob)
	}
}

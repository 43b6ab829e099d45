package trust

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// startDigest is the file's SHA-256; a cancelled context stops it.
func TestStartDigest(t *testing.T) {
	b := bytes.Repeat([]byte("assemble"), 1<<17)
	want := sha256.Sum256(b)
	sum, err := startDigest(context.Background(), bytes.NewReader(b), int64(len(b)))()
	if err != nil || sum != hex.EncodeToString(want[:]) {
		t.Fatalf("%s, %v; want %x", sum, err, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := startDigest(ctx, bytes.NewReader(b), int64(len(b)))(); err == nil {
		t.Fatal("a cancelled digest succeeded")
	}
}

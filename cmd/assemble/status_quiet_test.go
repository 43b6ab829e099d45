package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

// Issue 27, item 12: status -q prints nothing when everything matches; when
// something does not, it prints those droplets only (absent apart from
// differs), and exits 1. Before, -q printed every droplet's line.
func TestStatusQuiet(t *testing.T) {
	moto.Env(t)
	b := make([]byte, 4)
	rand.Read(b)
	u := hex.EncodeToString(b)
	dir := t.TempDir()
	keyring, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys", "trusted.asc"))
	stackDroplet := func(name string) map[string]any {
		return map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"stackName": name, "template": "t.yaml"}}
	}
	write := func(file string, ds map[string]any) string {
		mb, _ := json.Marshal(map[string]any{"schema": "cloud-assembly/1.0", "droplets": ds})
		sub := filepath.Join(dir, file)
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		unsigned := filepath.Join(sub, "unsigned.cloud")
		writeCloud(t, unsigned, map[string]string{"manifest.json": string(mb), "t.yaml": "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n"})
		return sign(t, sub, unsigned)
	}
	one := write("one", map[string]any{"A": stackDroplet("qa-" + u)})
	two := write("two", map[string]any{"A": stackDroplet("qa-" + u), "B": stackDroplet("qb-" + u)})
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"assemble", "deploy", "-q", "--keyring", keyring, one}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("deploy: %d\n%s%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"assemble", "status", "-q", "--keyring", keyring, one}, nil, &stdout, &stderr); code != 0 || stdout.Len()+stderr.Len() != 0 {
		t.Errorf("status -q of a match: exit %d, printed %q %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	code := run(context.Background(), []string{"assemble", "status", "-q", "--keyring", keyring, two}, nil, &stdout, &stderr)
	if code != 1 || stdout.String() != "B (stack): absent\n   stack qb-"+u+" does not exist\n" || !strings.Contains(stderr.String(), "differs") {
		t.Errorf("status -q of an absent droplet: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/signing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the worked example's outputs in docs/format.md")

// exampleBlock matches a block of docs/format.md's worked example: the
// marker line, then a fenced block.
var exampleBlock = regexp.MustCompile("(?s)<!-- example: ([^ ]+) -->\n```[a-z]*\n(.*?)```\n")

// Issue 23, item 11: docs/format.md's worked example is what assemble
// does, byte for byte: the project's files, built, give its manifest.json
// and entries, and signing with its nonce and time gives its attestation.
// go test ./cmd/assemble -run TestFormatDocExample -update-docs rewrites
// the outputs.
func TestFormatDocExample(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	path := filepath.Join("..", "..", "docs", "format.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	for _, m := range exampleBlock.FindAllStringSubmatch(string(doc), -1) {
		blocks[m[1]] = m[2]
	}
	dir := t.TempDir()
	project := filepath.Join(dir, "project")
	for _, name := range []string{"assembly.yaml", "site/index.html"} {
		if blocks[name] == "" {
			t.Fatalf("docs/format.md has no example block %s", name)
		}
		p := filepath.Join(project, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(blocks[name]), 0o644)
	}
	out := filepath.Join(dir, "site.cloud")
	if _, err := packager.Build(context.Background(), project, out, packager.BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	rc, err := assembly.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var manifest, prov []byte
	var entries strings.Builder
	width := 0
	for _, f := range rc.Files() {
		width = max(width, len(f.Name()))
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	headers := map[string]zip.FileHeader{}
	for _, f := range zr.File {
		headers[f.Name] = f.FileHeader
	}
	for _, f := range rc.Files() {
		h := headers[f.Name()]
		method := "deflate"
		if h.Method == 0 {
			method = "stored"
		}
		fmt.Fprintf(&entries, "%-*s  %s  %d -> %d  crc32 %08x\n", width, f.Name(), method, h.UncompressedSize64, h.CompressedSize64, h.CRC32)
		if h.Mode().Perm() != 0o644 || !h.Modified.Equal(assembly.DefaultModTime()) {
			t.Errorf("%s: mode %v, time %v; the doc says 0644, 1980-01-01", f.Name(), h.Mode(), h.Modified)
		}
		if f.Name() == assembly.ManifestName {
			r, _ := f.Open()
			var buf bytes.Buffer
			buf.ReadFrom(r)
			r.Close()
			manifest = buf.Bytes()
		}
		if f.Name() == provenance.EntryName {
			r, _ := f.Open()
			var buf bytes.Buffer
			buf.ReadFrom(r)
			r.Close()
			prov = buf.Bytes()
		}
	}
	nonce := make([]byte, 32)
	for i := range nonce {
		nonce[i] = byte(i)
	}
	att, err := signing.Attest(context.Background(), &rc.Reader, &signing.SignOptions{
		Rand: bytes.NewReader(nonce),
		Now:  func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	attJSON, err := att.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"manifest.json": string(manifest), "entries": entries.String(), "attestation": string(attJSON), "provenance": string(prov)}
	text := string(doc)
	for name, got := range want {
		if !strings.HasSuffix(got, "\n") {
			got += "\n" // a fenced block ends its last line
		}
		if blocks[name] == got {
			continue
		}
		if *updateDocs {
			text = strings.Replace(text, "<!-- example: "+name+" -->\n```"+fence(text, name)+"\n"+blocks[name]+"```\n",
				"<!-- example: "+name+" -->\n```"+fence(text, name)+"\n"+got+"```\n", 1)
			continue
		}
		t.Errorf("docs/format.md, example %s: the doc says\n%s\nassemble makes\n%s(go test ./cmd/assemble -run TestFormatDocExample -update-docs)", name, blocks[name], got)
	}
	if *updateDocs {
		os.WriteFile(path, []byte(text), 0o644)
	}
	if !strings.Contains(text, fmt.Sprintf("`manifest.json`, %d bytes", len(manifest))) {
		t.Errorf("docs/format.md does not say manifest.json is %d bytes", len(manifest))
	}
}

// fence is the language of example name's fenced block.
func fence(text, name string) string {
	i := strings.Index(text, "<!-- example: "+name+" -->\n```")
	rest := text[i+len("<!-- example: "+name+" -->\n```"):]
	return rest[:strings.Index(rest, "\n")]
}

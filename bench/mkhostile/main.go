// Command mkhostile writes the hostile inputs of issue #11 (memory before
// authentication) into a folder, for bench/hostile.sh:
//
//	names.cloud       unsigned, 131,072 entries with 1,024-byte names and
//	                  2,047-byte comments (~550 MB; ~410 MB of it the
//	                  central directory, the most the old limits allowed)
//	directory.cloud   unsigned, the largest central directory the current
//	                  limits accept: 131,072 entries, the names adding up to
//	                  assembly.MaxNameBytes, time extra fields filling the
//	                  directory up to assembly.MaxDirectorySize
//	fanout/           template.yaml with modules that each include the next
//	                  level FANOUT times (LEVELS levels), the last a small
//	                  3-resource module: FANOUT^LEVELS instances
//	bomb/             template.yaml holding a YAML alias bomb (9^9 nodes)
//	dense/            dense flow lists ("[x,x,...]"), each as large as its
//	                  file limit allows: template.yaml (cfn.MaxFileBytes),
//	                  module/template.yaml including such a module,
//	                  project/assembly.yaml (packager.MaxProjectFileSize),
//	                  blueprint.yaml (blueprint.MaxFileSize); and limit.yaml,
//	                  a template of the longest list yamlpos.MaxNodes accepts
//	insertfile/       issue 19 item 8: big.txt (1 MB, the most Fn::InsertFile
//	                  inserts) and templates holding a YAML anchor on an
//	                  Fn::InsertFile of it and 79 (t79.yaml, 1.2 KB) or
//	                  4,000 (t4000.yaml) aliases of it
//	schemas/          issue 19 item 9: loop.json, the 400-byte schema whose
//	                  definition D is oneOf [$ref D, $ref D], with a pointer
//	                  that does not resolve; chain.json, 40 definitions each
//	                  naming the next twice
//	regex/            issue 19 item 10: schemas/slow.json, a type whose
//	                  patternProperties pattern is ^(a+)+$, and template.yaml
//	                  setting 10 keys of 40 a's and a "!" against it
//	keycopies.gpg     the fixture Ed25519 public key (a binary keyring), copied
//	                  up to the 16 MiB key file bound: 69,000 copies (issue 19
//	                  item 11); and signed.cloud, a small assembly it signed
//
// Usage: mkhostile -o DIR [-only names,directory,fanout,bomb,dense,insertfile,schemas,regex,keycopies]
// (run from the repository's root: keycopies reads fixtures/keys)
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/yamlpos"
	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/packager/blueprint"
	"github.com/cloud-assembly/assemble/packager/cfn"
	"github.com/cloud-assembly/assemble/signing"
)

func main() {
	out := flag.String("o", "", "output folder")
	fanout := flag.Int("fanout", 10, "module instances per module (fanout/)")
	levels := flag.Int("levels", 5, "levels of modules (fanout/)")
	only := flag.String("only", "", "comma-separated sets to write (default: all)")
	flag.Parse()
	if *out == "" {
		log.Fatal("usage: mkhostile -o DIR")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"names", func() error { return names(filepath.Join(*out, "names.cloud")) }},
		{"directory", func() error { return directory(filepath.Join(*out, "directory.cloud")) }},
		{"fanout", func() error { return fanOut(filepath.Join(*out, "fanout"), *fanout, *levels) }},
		{"bomb", func() error { return bomb(filepath.Join(*out, "bomb")) }},
		{"dense", func() error { return dense(filepath.Join(*out, "dense")) }},
		{"insertfile", func() error { return insertFile(filepath.Join(*out, "insertfile")) }},
		{"schemas", func() error { return schemaLoops(filepath.Join(*out, "schemas")) }},
		{"regex", func() error { return slowRegex(filepath.Join(*out, "regex")) }},
		{"keycopies", func() error { return keyCopies(*out) }},
	}
	for _, step := range steps {
		if *only != "" && !slices.Contains(strings.Split(*only, ","), step.name) {
			continue
		}
		if err := step.run(); err != nil {
			log.Fatal(err)
		}
	}
}

const manifest = `{"schema": "cloud-assembly/1.0", "droplets": {}}`

// zipWriter writes stored entries by hand, so that names, comments and
// extra fields can break any limit.
type zipWriter struct {
	w       *bufio.Writer
	f       *os.File
	off     uint64
	central []byte // written at the end
	n       int
}

func newZip(path string) (*zipWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &zipWriter{w: bufio.NewWriterSize(f, 1<<20), f: f}, nil
}

// add writes one stored entry; the central record goes to cw (the central
// directory may be written to a file of its own when it is large).
func (z *zipWriter) add(name string, data []byte, extra []byte, comment int, cw *bufio.Writer) {
	crc := crc32.ChecksumIEEE(data)
	h := le32(nil, 0x04034b50)
	h = le16(h, 20) // version needed
	h = common(h, crc, len(data), len(name), len(extra))
	z.w.Write(h)
	z.w.WriteString(name)
	z.w.Write(extra)
	z.w.Write(data)
	c := le32(nil, 0x02014b50)
	c = le16(c, 3<<8|20) // made by: Unix
	c = le16(c, 20)      // version needed
	c = common(c, crc, len(data), len(name), len(extra))
	c = le16(c, comment)
	c = le16(c, 0)
	c = le16(c, 0)
	c = le32(c, 0o100644<<16)
	c = le32(c, uint32(z.off))
	cw.Write(c)
	cw.WriteString(name)
	cw.Write(extra)
	cw.WriteString(strings.Repeat("c", comment))
	z.off += uint64(len(h) + len(name) + len(extra) + len(data))
	z.n++
}

// common appends the fields local and central headers share after the
// version needed: flags, method (stored), time, date, CRC-32, sizes, name
// and extra lengths.
func common(b []byte, crc uint32, size, name, extra int) []byte {
	b = le16(b, 0)
	b = le16(b, 0)
	b = le16(b, 0)
	b = le16(b, 0x21)
	b = le32(b, crc)
	b = le32(b, uint32(size))
	b = le32(b, uint32(size))
	b = le16(b, name)
	return le16(b, extra)
}

func le16(b []byte, v int) []byte    { return binary.LittleEndian.AppendUint16(b, uint16(v)) }
func le32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func le64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// finish appends the central directory (from the spool file) and the end
// record (zip64 when needed).
func (z *zipWriter) finish(spool *os.File, cdSize uint64) error {
	if _, err := spool.Seek(0, 0); err != nil {
		return err
	}
	if _, err := z.w.ReadFrom(spool); err != nil {
		return err
	}
	var e []byte
	records, size, offset := uint64(z.n), cdSize, z.off
	if records >= 0xffff || size >= 0xffffffff || offset >= 0xffffffff {
		e = le32(e, 0x06064b50)
		e = le64(e, 44)
		e = le16(e, 45)
		e = le16(e, 45)
		e = le32(e, 0)
		e = le32(e, 0)
		e = le64(e, records)
		e = le64(e, records)
		e = le64(e, size)
		e = le64(e, offset)
		e = le32(e, 0x07064b50)
		e = le32(e, 0)
		e = le64(e, offset+size) // the zip64 end record's offset
		e = le32(e, 1)
		records = min(records, 0xffff)
		size = min(size, 0xffffffff)
		offset = min(offset, 0xffffffff)
	}
	e = le32(e, 0x06054b50)
	e = le16(e, 0)
	e = le16(e, 0)
	e = le16(e, int(records))
	e = le16(e, int(records))
	e = le32(e, uint32(size))
	e = le32(e, uint32(offset))
	e = le16(e, 0)
	z.w.Write(e)
	if err := z.w.Flush(); err != nil {
		return err
	}
	return z.f.Close()
}

// build writes an archive of n entries: name(i), extra(i), comment bytes.
func build(path string, n int, name func(int) string, extra func(int) []byte, comment int) error {
	z, err := newZip(path)
	if err != nil {
		return err
	}
	spool, err := os.CreateTemp(filepath.Dir(path), ".central-*")
	if err != nil {
		return err
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	cw := bufio.NewWriterSize(spool, 1<<20)
	z.add(assembly.ManifestName, []byte(manifest), nil, 0, cw)
	var cdSize uint64 = 46 + uint64(len(assembly.ManifestName))
	for i := 1; i < n; i++ {
		nm, ex := name(i), extra(i)
		z.add(nm, nil, ex, comment, cw)
		cdSize += 46 + uint64(len(nm)+len(ex)+comment)
	}
	if err := cw.Flush(); err != nil {
		return err
	}
	return z.finish(spool, cdSize)
}

// longName is a 1,024-byte name, unique by i, in segments of 200 bytes.
func longName(i int, size int) string {
	id := fmt.Sprintf("%08d", i)
	var b strings.Builder
	for b.Len() < size-len(id)-1 {
		seg := min(200, size-len(id)-1-b.Len()-1)
		if seg <= 0 {
			break
		}
		b.WriteString(strings.Repeat("n", seg))
		b.WriteByte('/')
	}
	b.WriteString(id)
	s := b.String()
	return s + strings.Repeat("x", max(0, size-len(s)))
}

func names(path string) error {
	return build(path, assembly.MaxFiles, func(i int) string { return longName(i, assembly.MaxNameLength) },
		func(int) []byte { return nil }, 2047)
}

func directory(path string) error {
	n := assembly.MaxFiles
	nameLen := assembly.MaxNameBytes/n - 1
	// Fill the directory with extended-timestamp extra fields (allowed).
	per := (assembly.MaxDirectorySize-2048)/n - 46 - nameLen
	extra := make([]byte, per)
	binary.LittleEndian.PutUint16(extra, 0x5455)
	binary.LittleEndian.PutUint16(extra[2:], uint16(per-4))
	return build(path, n, func(i int) string { return longName(i, nameLen) }, func(int) []byte { return extra }, 0)
}

func fanOut(dir string, fanout, levels int) error {
	if err := os.MkdirAll(filepath.Join(dir, "modules"), 0o755); err != nil {
		return err
	}
	instances := func(src string) string {
		var b strings.Builder
		b.WriteString("Modules:\n")
		for i := 0; i < fanout; i++ {
			fmt.Fprintf(&b, "  M%d:\n    Source: %s\n    Properties:\n      Name: n%d\n", i, src, i)
		}
		return b.String()
	}
	files := map[string]string{
		"template.yaml": "Parameters:\n  Name:\n    Type: String\n    Default: app\n" + instances("./modules/l1.yaml") + "Resources:\n  Top:\n    Type: AWS::SNS::Topic\n",
		"modules/leaf.yaml": `Parameters:
  Name:
    Type: String
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Sub ${Name}-data
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Ref Name
  Topic:
    Type: AWS::SNS::Topic
`,
	}
	for l := 1; l < levels; l++ {
		next := fmt.Sprintf("./l%d.yaml", l+1)
		if l == levels-1 {
			next = "./leaf.yaml"
		}
		files[fmt.Sprintf("modules/l%d.yaml", l)] = "Parameters:\n  Name:\n    Type: String\n" + instances(next)
	}
	if levels == 1 {
		files["template.yaml"] = strings.ReplaceAll(files["template.yaml"], "l1.yaml", "leaf.yaml")
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func bomb(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("Metadata:\n  a0: &a0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n")
	return os.WriteFile(filepath.Join(dir, "template.yaml"), []byte(b.String()), 0o644)
}

// denseList returns a flow list of n items "x": two bytes a node, the
// densest list yaml.v3 reads (issue #11: 2.8 MB of it cost 545 MiB).
func denseList(n int) string {
	return "[" + strings.Repeat("x,", n-1) + "x]"
}

// dense writes files of one dense flow list, each as large as its file
// limit allows, and limit.yaml, the longest such list a template may hold.
func dense(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "module"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "project"), 0o755); err != nil {
		return err
	}
	fill := func(head, tail string, size int) string {
		return head + denseList((size-len(head)-len(tail)-1)/2) + tail
	}
	const topic = "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n    Metadata:\n      List: "
	files := map[string]string{
		"template.yaml":         fill(topic, "\n", cfn.MaxFileBytes),
		"module/template.yaml":  "Modules:\n  Dense:\n    Source: ./module.yaml\nResources:\n  Topic:\n    Type: AWS::SNS::Topic\n",
		"module/module.yaml":    fill(topic, "\n", cfn.MaxFileBytes),
		"project/assembly.yaml": fill("droplets:\n  app:\n    type: stack\n    properties:\n      template: template.yaml\n      tags: ", "\n", packager.MaxProjectFileSize),
		"project/template.yaml": "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n",
		"blueprint.yaml":        fill("version: "+blueprint.Version+"\nmetadata:\n  list: ", "\nresources: {}\n", blueprint.MaxFileSize),
		// the document, its mapping, Resources, its mapping, Topic, its
		// mapping, Type, its value, Metadata, its mapping, List, the list:
		// 12 nodes besides the items
		"limit.yaml": topic + denseList(yamlpos.MaxNodes-12) + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// insertFile writes the inputs of issue 19 item 8: a YAML anchor on an
// Fn::InsertFile of a 1 MB file, and n aliases of it.
func insertFile(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat("0123456789abcde\n", 1<<20/16)), 0o644); err != nil {
		return err
	}
	for _, n := range []int{79, 4000} {
		var b strings.Builder
		b.WriteString("Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n    Metadata:\n      First: &f {Fn::InsertFile: big.txt}\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "      A%d: *f\n", i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("t%d.yaml", n)), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// schemaLoops writes the schemas of issue 19 item 9.
func schemaLoops(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	const head = `{"typeName": "Bench::Loop::Thing", "description": "hostile", "additionalProperties": false, "primaryIdentifier": ["/properties/Name"], "createOnlyProperties": ["/properties/Name"], `
	loop := head + `"definitions": {"D": {"oneOf": [{"$ref": "#/definitions/D"}, {"$ref": "#/definitions/D"}]}}, "properties": {"Name": {"type": "string"}, "A": {"$ref": "#/definitions/D"}}, "readOnlyProperties": ["/properties/A/x/y/z"]}`
	var defs []string
	for i := 0; i < 40; i++ {
		next := fmt.Sprintf(`{"$ref": "#/definitions/D%d"}`, i+1)
		defs = append(defs, fmt.Sprintf(`"D%d": {"oneOf": [%s, %s]}`, i, next, next))
	}
	defs = append(defs, `"D40": {"type": "object", "properties": {"Leaf": {"type": "string"}}}`)
	chain := head + `"definitions": {` + strings.Join(defs, ", ") + `}, "properties": {"Name": {"type": "string"}, "A": {"$ref": "#/definitions/D0"}}, "readOnlyProperties": ["/properties/A/Missing"]}`
	if err := os.WriteFile(filepath.Join(dir, "loop.json"), []byte(loop), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "chain.json"), []byte(chain), 0o644)
}

// slowRegex writes the inputs of issue 19 item 10.
func slowRegex(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "schemas"), 0o755); err != nil {
		return err
	}
	const slow = `{"typeName": "Bench::Slow::Thing", "description": "hostile", "properties": {"Name": {"type": "string"}, "Labels": {"type": "object", "additionalProperties": false, "patternProperties": {"^(a+)+$": {"type": "string"}}}}, "primaryIdentifier": ["/properties/Name"], "additionalProperties": false}`
	if err := os.WriteFile(filepath.Join(dir, "schemas", "slow.json"), []byte(slow), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("Resources:\n  Thing:\n    Type: Bench::Slow::Thing\n    Properties:\n      Name: t\n      Labels:\n")
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "        %s%d: x\n", strings.Repeat("a", 40)+"!", i)
	}
	return os.WriteFile(filepath.Join(dir, "template.yaml"), []byte(b.String()), 0o644)
}

// keyCopies writes keycopies.gpg, the fixture Ed25519 public key copied up
// to the 16 MiB bound of a key file, and signed.cloud, signed by that key.
func keyCopies(dir string) error {
	f, err := os.Open(filepath.Join("fixtures", "keys", "ed25519.pub.asc"))
	if err != nil {
		return err
	}
	defer f.Close()
	ab, err := armor.Decode(f)
	if err != nil {
		return err
	}
	key, err := io.ReadAll(ab.Body)
	if err != nil {
		return err
	}
	const bound = 16 << 20
	if err := os.WriteFile(filepath.Join(dir, "keycopies.gpg"), bytes.Repeat(key, bound/len(key)), 0o644); err != nil {
		return err
	}
	signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join("fixtures", "keys", "ed25519.sec.asc")})
	if err != nil {
		return err
	}
	w := assembly.NewWriter(assembly.WriterOptions{})
	if err := w.AddBytes(assembly.ManifestName, []byte(manifest)); err != nil {
		return err
	}
	out := filepath.Join(dir, "signed.cloud")
	if err := w.WriteFile(context.Background(), out); err != nil {
		return err
	}
	_, err = signing.SealFile(context.Background(), out, out, signers, &signing.SignOptions{Replace: true})
	return err
}

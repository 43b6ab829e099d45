// Command mkassembly makes the unsigned assemblies the benchmarks verify
// (used by bench/verify.sh, before `assemble build` is involved):
//
//	mkassembly -tree DIR -o OUT.cloud          every file under DIR, deflated by assembly.Writer
//	mkassembly -stored-mib N -blob B -o OUT    one N MiB incompressible entry, stored, also written to B
//
// Both add a minimal manifest.json when there is none.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/assembly"
)

const manifest = `{"schema": "cloud-assembly/1.0", "droplets": {}}` + "\n"

func main() {
	tree := flag.String("tree", "", "folder to archive")
	storedMiB := flag.Int("stored-mib", 0, "size of the one stored entry, in MiB")
	blob := flag.String("blob", "", "also write the stored entry's bytes to this file")
	out := flag.String("o", "", "output assembly")
	flag.Parse()
	if *out == "" || (*tree == "") == (*storedMiB == 0) {
		log.Fatal("usage: mkassembly (-tree DIR | -stored-mib N -blob FILE) -o OUT")
	}
	var err error
	if *tree != "" {
		err = fromTree(*tree, *out)
	} else {
		err = stored(*storedMiB, *blob, *out)
	}
	if err != nil {
		log.Fatal(err)
	}
}

func fromTree(dir, out string) error {
	w := assembly.NewWriter(assembly.WriterOptions{})
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		return w.AddFile(filepath.ToSlash(rel), p)
	})
	if err != nil {
		return err
	}
	if !w.Has(assembly.ManifestName) {
		if err := w.AddBytes(assembly.ManifestName, []byte(manifest)); err != nil {
			return err
		}
	}
	return w.WriteFile(context.Background(), out)
}

// stored writes n MiB of random bytes as one stored entry (and to blob).
func stored(n int, blob, out string) error {
	if blob == "" {
		return fmt.Errorf("-stored-mib needs -blob FILE")
	}
	bf, err := os.Create(blob)
	if err != nil {
		return err
	}
	crc := crc32.NewIEEE()
	buf := make([]byte, 1<<20)
	bw := bufio.NewWriter(bf)
	for i := 0; i < n; i++ {
		rand.Read(buf)
		crc.Write(buf)
		bw.Write(buf)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	bf.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	mw, _ := zw.CreateHeader(&zip.FileHeader{Name: assembly.ManifestName, Method: zip.Deflate})
	mw.Write([]byte(manifest))
	size := uint64(n) << 20
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "images/blob.bin", Method: zip.Store, CRC32: crc.Sum32(),
		CompressedSize64: size, UncompressedSize64: size})
	if err != nil {
		return err
	}
	src, err := os.Open(blob)
	if err != nil {
		return err
	}
	defer src.Close()
	if _, err := io.Copy(w, src); err != nil {
		return err
	}
	return zw.Close()
}

package artifacts

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// launchScript is what Spring Boot and others put before an executable
// jar's zip data, so that ./app.jar runs.
const launchScript = "#!/bin/bash\n# a launch script\nexec java -jar \"$0\" \"$@\"\n"

// TestExecutableJar: a zip with a launch script before its data is a zip,
// as Python's zipfile.is_zipfile (aws-cli's test) says, and goes up as it
// is, not wrapped in a new zip (issue 28 item 6); with its offsets
// relative to the zip data, and adjusted to the file (zip -A).
func TestExecutableJar(t *testing.T) {
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("META-INF/MANIFEST.MF")
	w.Write([]byte("Manifest-Version: 1.0\nMain-Class: app.Main\n"))
	w, _ = zw.Create("app/Main.class")
	w.Write(bytes.Repeat([]byte{0xca, 0xfe, 0xba, 0xbe}, 100))
	zw.Close()
	jars := map[string][]byte{"concatenated": append([]byte(launchScript), zb.Bytes()...)}
	if zipBin, err := exec.LookPath("zip"); err == nil {
		dir := t.TempDir()
		p := filepath.Join(dir, "app.jar")
		if err := os.WriteFile(p, jars["concatenated"], 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(zipBin, "-A", p).CombinedOutput(); err != nil {
			t.Fatalf("zip -A: %v\n%s", err, out)
		}
		adjusted, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		jars["zip -A"] = adjusted
	} else {
		t.Log("Info-ZIP zip is not installed: the adjusted-offsets case is not run")
	}
	python, _ := exec.LookPath("python3")
	for name, jar := range jars {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{
				"template.yaml": "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: app.jar\n  S:\n    Type: AWS::Serverless::Function\n    Properties:\n      CodeUri: app.jar\n",
				"app.jar":       string(jar),
			})
			if python != "" {
				out, err := exec.Command(python, "-c", "import zipfile, sys; print(zipfile.is_zipfile(sys.argv[1]))", filepath.Join(dir, "app.jar")).Output()
				if err != nil || string(bytes.TrimSpace(out)) != "True" {
					t.Fatalf("Python's zipfile.is_zipfile says %q (%v): the test jar is not what aws-cli ships as it is", out, err)
				}
			}
			_, s, err := pack(t, dir, Options{Bucket: "bkt"})
			if err != nil {
				t.Fatal(err)
			}
			as := s.Assets()
			if len(as) != 1 {
				t.Fatalf("%d assets, want 1", len(as))
			}
			if as[0].Data() != nil {
				t.Fatalf("the jar was wrapped in a new zip")
			}
			r, err := as[0].Open()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var got bytes.Buffer
			if _, err := got.ReadFrom(r); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), jar) {
				t.Errorf("uploaded bytes differ from the jar")
			}
		})
	}
	// A text file that happens to end in the record's signature, but
	// names no central directory, is zipped as Lambda needs.
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"template.yaml": "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: handler.py\n",
		"handler.py":    "# " + strings.Repeat("x", 60) + "PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00\x2e\x00\x00\x00\x00\x00\x00\x00\x00\x00",
	})
	_, s, err := pack(t, dir, Options{Bucket: "bkt"})
	if err != nil {
		t.Fatal(err)
	}
	if as := s.Assets(); len(as) != 1 || as[0].Data() == nil {
		t.Errorf("a file that is not a zip was shipped as it is")
	}
}

package artifacts

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestS3StringsBecomeMappings: an s3:// string in a property that
// CloudFormation takes as a mapping is written as that mapping, with the
// object version of ?versionId=, as aws-cli writes it (issue 28 item 2);
// for every such property of the table.
func TestS3StringsBecomeMappings(t *testing.T) {
	n := 0
	for _, p := range Properties() {
		if p.Form != BucketKey {
			continue
		}
		n++
		t.Run(p.Type+"."+strings.Join(p.Path, "."), func(t *testing.T) {
			for _, tc := range []struct{ value, want string }{
				{"s3://src-bucket/dir/code.zip", p.Bucket + ": src-bucket\n" + "{ind}" + p.Key + ": dir/code.zip\n"},
				{"s3://src-bucket//lead.zip", p.Bucket + ": src-bucket\n" + "{ind}" + p.Key + ": lead.zip\n"},
				{"s3://src-bucket/code.zip?versionId=v1.2", p.Bucket + ": src-bucket\n" + "{ind}" + p.Key + ": code.zip\n" + "{ind}" + p.Version + ": v1.2\n"},
			} {
				dir := t.TempDir()
				write(t, dir, map[string]string{"template.yaml": resourceFor(p, tc.value)})
				out, s, err := pack(t, dir, Options{NoBucket: "no bucket needed"})
				if p.Version == "" && strings.Contains(tc.value, "versionId") {
					if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), "takes no object version") {
						t.Errorf("%s: got %v, want ErrArtifact naming the version", tc.value, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", tc.value, err)
				}
				if len(s.Assets()) != 0 {
					t.Errorf("%s: made assets", tc.value)
				}
				ind := "          "[:6+2*len(p.Path)]
				want := strings.ReplaceAll(tc.want, "{ind}", ind)
				if !strings.Contains(out, want) {
					t.Errorf("%s: packaged template lacks\n%s\n%s", tc.value, want, out)
				}
			}
		})
	}
	if n != 7 {
		t.Errorf("%d mapping properties, want 7", n)
	}
}

// TestRemoteRefused: what aws-cli would misread or CloudFormation could not
// deploy fails at packaging, placed: a web address where S3 is read (issue
// 28 item 8), an s3:// URI with no key or another query, a scheme in
// capitals.
func TestRemoteRefused(t *testing.T) {
	for _, p := range Properties() {
		if p.Template {
			continue
		}
		for _, v := range []string{"https://example.com/code.zip", "http://example.com/code.zip"} {
			dir := t.TempDir()
			write(t, dir, map[string]string{"template.yaml": resourceFor(p, v)})
			_, _, err := pack(t, dir, Options{NoBucket: "no bucket"})
			var ae *Error
			if !errors.Is(err, ErrArtifact) || !errors.As(err, &ae) || ae.At.Line == 0 || !strings.Contains(err.Error(), "from S3 only") {
				t.Errorf("%s %s: got %v, want ErrArtifact at its line", p.Type, v, err)
			}
		}
	}
	lambda := func(code string) string {
		return "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: " + code + "\n"
	}
	for _, tc := range []struct{ tmpl, text string }{
		{lambda("s3://bucket-only"), "no object key"},
		{lambda("s3://bucket-only/"), "no object key"},
		{lambda("s3://b/k.zip?versionId=a&versionId=b"), "one ?versionId"},
		{lambda("s3://b/k.zip?versionId="), "one ?versionId"},
		{lambda("s3://b/k.zip?partNumber=1"), `query key "partNumber"`},
		{lambda("S3://b/k.zip"), "lower case"},
		{"Resources:\n  R:\n    Type: AWS::SQS::Queue\n  X:\n    Fn::Transform:\n      Name: AWS::Include\n      Parameters:\n        Location: https://example.com/x.yaml\n", "from S3 only"},
	} {
		dir := t.TempDir()
		write(t, dir, map[string]string{"template.yaml": tc.tmpl})
		_, _, err := pack(t, dir, Options{Bucket: "bkt"})
		if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), "template.yaml:") {
			t.Errorf("%q: got %v, want ErrArtifact with %q", tc.tmpl, err, tc.text)
		}
	}
	// Nested templates are read from web addresses: left as written.
	dir := t.TempDir()
	write(t, dir, map[string]string{"template.yaml": "Resources:\n  S:\n    Type: AWS::CloudFormation::Stack\n    Properties:\n      TemplateURL: https://example.com/t.yaml\n"})
	if _, _, err := pack(t, dir, Options{Bucket: "bkt"}); err != nil {
		t.Errorf("https TemplateURL: %v", err)
	}
}

// TestIncludeForms: every AWS::Include is packaged, whether Fn::Transform
// holds one entry or a list of them (issue 28 item 4), and in the
// template's Transform section.
func TestIncludeForms(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"template.yaml": `Transform:
  - Name: AWS::Include
    Parameters:
      Location: top.yaml
Resources:
  Api:
    Type: AWS::ApiGateway::RestApi
    Properties:
      Body:
        Fn::Transform:
          - Name: AWS::Include
            Parameters:
              Location: one.yaml
          - Name: AWS::Include
            Parameters:
              Location: s3://elsewhere/two.yaml
          - Name: AWS::Include
            Parameters:
              Location: three.yaml
          - Name: MyMacro
  Q:
    Type: AWS::SQS::Queue
    Properties:
      Tags:
        Fn::Transform:
          Name: AWS::Include
          Parameters:
            Location: one.yaml
`,
		"top.yaml":   "Outputs: {}\n",
		"one.yaml":   "openapi: 3.0.0\n",
		"three.yaml": "swagger: '2.0'\n",
	})
	out, s, err := pack(t, dir, Options{Bucket: "bkt"})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Assets()); got != 3 {
		t.Errorf("%d assets, want 3 (top, one, three)", got)
	}
	for _, local := range []string{"top.yaml", "one.yaml", "three.yaml"} {
		if strings.Contains(out, "Location: "+local) {
			t.Errorf("Location %s left unpackaged:\n%s", local, out)
		}
	}
	if !strings.Contains(out, "s3://elsewhere/two.yaml") || strings.Count(out, "Location: s3://bkt/") != 4 {
		t.Errorf("packaged template:\n%s", out)
	}
}

// TestOutputFolderLeftOut: a folder zipped leaves out the output folder
// (and a link to it), whatever the previous run left there; a folder that
// is the output folder, or the key prefix's folder in it, is refused
// (issue 28 item 5).
func TestOutputFolderLeftOut(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"template.yaml":   "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: .\n",
		"index.js":        "x",
		"out/packaged":    "previous run",
		"out/0123abcd":    "previous artifact",
		"sub/out2/p/file": "previous artifact",
		"sub/keep.txt":    "k",
	})
	if err := os.Symlink("out", filepath.Join(dir, "out-link")); err != nil {
		t.Fatal(err)
	}
	_, s, err := pack(t, dir, Options{Bucket: "bkt", OutputDir: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(zipNames(t, s.Assets()[0].Data()), ","); got != "index.js,sub/keep.txt,sub/out2/p/file,template.yaml" {
		t.Errorf("zip holds %s", got)
	}
	// The prefix folder inside the output folder, zipped by a folder
	// within the output folder.
	write(t, dir, map[string]string{"template.yaml": "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: sub\n"})
	_, s, err = pack(t, dir, Options{Bucket: "bkt", OutputDir: dir, KeyPrefix: "sub/out2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(zipNames(t, s.Assets()[0].Data()), ","); got != "keep.txt" {
		t.Errorf("zip holds %s", got)
	}
	for _, tc := range []struct{ code, out, prefix string }{{".", "", ""}, {"out", "out", ""}, {"sub/out2", "sub", "out2"}} {
		write(t, dir, map[string]string{"template.yaml": "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: " + tc.code + "\n"})
		_, _, err := pack(t, dir, Options{Bucket: "bkt", OutputDir: filepath.Join(dir, tc.out), KeyPrefix: tc.prefix})
		if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), "is the folder the output is written to") {
			t.Errorf("Code: %s, output %s: got %v", tc.code, tc.out, err)
		}
	}
}

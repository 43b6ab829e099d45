package remote

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // scheme, or "" for ErrLocation
	}{
		{"oci://registry.example.com/team/app:v1", SchemeOCI},
		{"oci://localhost:5000/app@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", SchemeOCI},
		{"oci://127.0.0.1:5000/team/app", SchemeOCI},
		{"oci://app:v1", ""},
		{"oci://Registry.example.com/Team/App:v1", ""},
		{"s3://bucket/releases/app.cloud", SchemeS3},
		{"s3://bucket/app.cloud?versionId=3sL4kqtJlcpXroDTDmJ", SchemeS3},
		{"s3://bucket/app.cloud?versionId=", ""},
		{"s3://bucket/app.cloud?acl=x", ""},
		{"s3://bucket", ""},
		{"s3:///key", ""},
		{"https://example.com/app.cloud", SchemeHTTPS},
		{"https://user:pw@example.com/app.cloud", ""},
		{"http://127.0.0.1:8080/app.cloud", SchemeHTTP},
		{"http://localhost/app.cloud", SchemeHTTP},
		{"http://[::1]:80/app.cloud", SchemeHTTP},
		{"http://example.com/app.cloud", ""},
		{"http://10.0.0.1/app.cloud", ""},
		{"ftp://example.com/app.cloud", ""},
		{"app.cloud", ""},
	} {
		l, err := Parse(c.in)
		switch {
		case c.want == "" && !errors.Is(err, ErrLocation):
			t.Errorf("Parse(%q) = %v, %v; want ErrLocation", c.in, l, err)
		case c.want != "" && (err != nil || l.Scheme != c.want || l.String() != c.in):
			t.Errorf("Parse(%q) = %+v, %v; want scheme %s", c.in, l, err, c.want)
		}
	}
	l, _ := Parse("s3://b/k/a.cloud?versionId=v1")
	if l.Bucket != "b" || l.Key != "k/a.cloud" || l.VersionID != "v1" {
		t.Errorf("s3 location %+v", l)
	}
	for _, s := range []string{"oci://x/y", "S3://b/k", "https://h/p", "http://h/p"} {
		if !IsLocation(s) {
			t.Errorf("IsLocation(%q) = false", s)
		}
	}
	for _, s := range []string{"app.cloud", "./oci://x", "/tmp/s3:/x", ""} {
		if IsLocation(s) {
			t.Errorf("IsLocation(%q) = true", s)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:pw@host/a.cloud":                          "https://REDACTED@host/a.cloud",
		"https://host/a.cloud?X-Amz-Signature=abc&X-Amz-Date=1": "https://host/a.cloud?X-Amz-Signature=REDACTED&X-Amz-Date=REDACTED",
		"s3://b/k?versionId=3":                                  "s3://b/k?versionId=3",
		"oci://r/x/y:1":                                         "oci://r/x/y:1",
		"app.cloud":                                             "app.cloud",
		"https://h/p?token":                                     "https://h/p?token=REDACTED",
		"https://u@h/p#frag":                                    "https://REDACTED@h/p#frag",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := Parse("https://user:hunter2@host/a.cloud"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Parse of a URL with a password: %v", err)
	}
	for in, want := range map[string]string{
		"https://host/dist/app.cloud?X-Amz-Signature=abc": "app.cloud",
		"s3://b/releases/1.0/app.cloud":                   "app.cloud",
		"oci://r.example/team/app:1.0":                    "app",
	} {
		l, err := Parse(in)
		if err != nil || l.Base() != want {
			t.Errorf("Base of %s = %v, %v; want %s", in, l, err, want)
		}
	}
}

func TestOCILocationMessages(t *testing.T) {
	_, err := Parse("oci://registry.example/Team/App:1")
	if !errors.Is(err, ErrLocation) || !strings.Contains(err.Error(), "uppercase") || !strings.Contains(err.Error(), `"team/app"`) {
		t.Errorf("an uppercase repository: %v", err)
	}
	host := inProcessRegistry(t, nil)
	_, err = Open(context.Background(), "oci://"+host+"/team/none", nil)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "latest") {
		t.Errorf("a location without a tag: %v, want ErrNotFound saying latest was tried", err)
	}
}

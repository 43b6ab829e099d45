package remote

import (
	"errors"
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

package remote

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// Schemes this package reads.
const (
	SchemeOCI   = "oci"
	SchemeS3    = "s3"
	SchemeHTTPS = "https"
	SchemeHTTP  = "http"
)

// A Location is a parsed location. Only the fields of its scheme are set.
type Location struct {
	raw     string
	tagless bool // an OCI location given without a tag or digest: latest
	Scheme  string

	// OCI: the manifest's reference.
	Ref name.Reference
	// S3: bucket, key and version (empty: the latest).
	Bucket, Key, VersionID string
	// HTTPS (and loopback HTTP): the URL.
	URL *url.URL
}

// String is the location as it was given, with any secret it held
// redacted (Redact).
func (l *Location) String() string { return Redact(l.raw) }

// Base is the last segment of the location's path, without its query or
// tag: the name of the file it holds ("app.cloud" for
// https://host/dist/app.cloud?X-Amz-Signature=...).
func (l *Location) Base() string {
	var p string
	switch l.Scheme {
	case SchemeOCI:
		p = l.Ref.Context().RepositoryStr()
	case SchemeS3:
		p = l.Key
	default:
		p = l.URL.Path
	}
	p = strings.TrimRight(p, "/")
	return p[strings.LastIndex(p, "/")+1:]
}

// Redact returns s, a location or anything that may be one, with the
// secrets a URL can carry replaced by "REDACTED": the user information
// (user:password@) and the value of every query parameter but S3's
// versionId (a presigned URL's credential and signature). It is what
// every message, JSON field and annotation says in place of a location.
func Redact(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	if at := strings.LastIndex(rest[:authEnd], "@"); at >= 0 {
		rest = "REDACTED@" + rest[at+1:]
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery {
		return scheme + "://" + rest
	}
	query, frag, hasFrag := strings.Cut(query, "#")
	params := strings.Split(query, "&")
	for i, p := range params {
		k, _, _ := strings.Cut(p, "=")
		if k != "versionId" {
			params[i] = k + "=REDACTED"
		}
	}
	out := scheme + "://" + path + "?" + strings.Join(params, "&")
	if hasFrag {
		out += "#" + frag
	}
	return out
}

// IsLocation reports whether s names a remote location (it starts with
// one of the schemes this package reads) rather than a file. A file name
// that looks like one can be given as ./oci:/...
func IsLocation(s string) bool {
	for _, p := range []string{"oci://", "s3://", "https://", "http://"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return true
		}
	}
	return false
}

// Parse parses a location:
//
//	oci://REGISTRY/REPOSITORY[:TAG|@sha256:DIGEST]   (no tag and no digest: latest)
//	s3://BUCKET/KEY[?versionId=VERSION]
//	https://HOST/PATH                                 (http:// only to a loopback host)
func Parse(s string) (*Location, error) {
	bad := func(format string, args ...any) (*Location, error) {
		return nil, fmt.Errorf("%w: %q: %s", ErrLocation, Redact(s), fmt.Sprintf(format, args...))
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return bad("not a location (oci://, s3://, https://)")
	}
	l := &Location{raw: s, Scheme: strings.ToLower(scheme)}
	switch l.Scheme {
	case SchemeOCI:
		reg, _, _ := strings.Cut(rest, "/")
		if reg == "" || !strings.Contains(rest, "/") {
			return bad("want oci://REGISTRY/REPOSITORY[:TAG|@sha256:DIGEST]")
		}
		var opts []name.Option
		if isLoopback(hostOf(reg)) {
			opts = append(opts, name.Insecure)
		}
		ref, err := name.ParseReference(rest, opts...)
		if err != nil {
			repo, _, _ := strings.Cut(strings.TrimPrefix(rest, reg+"/"), "@")
			if i := strings.LastIndex(repo, ":"); i >= 0 {
				repo = repo[:i]
			}
			if repo != strings.ToLower(repo) {
				return bad("repository %q has uppercase letters: OCI repository names are lowercase letters, digits and separators (. _ __ - /); use %q", repo, strings.ToLower(repo))
			}
			return bad("%v", err)
		}
		l.tagless = !strings.Contains(rest[strings.LastIndex(rest, "/")+1:], ":") && !strings.Contains(rest, "@")
		if ref.Context().RegistryStr() != reg {
			return bad("want oci://REGISTRY/REPOSITORY with the registry's host first")
		}
		l.Ref = ref
	case SchemeS3:
		u, err := url.Parse(s)
		if err != nil {
			return bad("%v", err)
		}
		l.Bucket, l.Key = u.Host, strings.TrimPrefix(u.Path, "/")
		if l.Bucket == "" || l.Key == "" || u.User != nil || u.Fragment != "" {
			return bad("want s3://BUCKET/KEY[?versionId=VERSION]")
		}
		q := u.Query()
		for k := range q {
			if k != "versionId" {
				return bad("unknown query parameter %q (only versionId)", k)
			}
		}
		l.VersionID = q.Get("versionId")
		if q.Has("versionId") && l.VersionID == "" {
			return bad("empty versionId")
		}
	case SchemeHTTPS, SchemeHTTP:
		u, err := url.Parse(s)
		if err != nil {
			return bad("%v", err)
		}
		if u.Host == "" || u.User != nil {
			return bad("want %s://HOST/PATH (no credentials in the URL)", l.Scheme)
		}
		if l.Scheme == SchemeHTTP && !isLoopback(u.Hostname()) {
			return bad("plain http:// is allowed only to a loopback host (localhost, 127.0.0.1, ::1); use https://")
		}
		u.Scheme = l.Scheme
		u.Fragment = ""
		l.URL = u
	default:
		return bad("unknown scheme %q (oci://, s3://, https://)", scheme)
	}
	return l, nil
}

// hostOf strips a port from host[:port] or [v6]:port.
func hostOf(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// isLoopback: localhost, or a loopback IP address.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

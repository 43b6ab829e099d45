// Package ghattest verifies a GitHub artifact attestation offline: a
// Sigstore bundle whose signature is by a short-lived Fulcio certificate
// issued to a GitHub Actions workflow and logged in a transparency log,
// judged against a trusted root the caller supplies (the output of
// `gh attestation trusted-root`, or Sigstore's public-good root), with no
// network access and no token.
//
// It needs sigstore-go, which brings about 300 packages, so the default
// assemble binary does not link it: the CLI's command that uses it is
// built only with `-tags sigstore` (see docs/provenance.md). A Go program
// imports this package directly.
package ghattest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"

	"github.com/cloud-assembly/assemble/errcode"
)

// GitHubIssuer is the OIDC issuer of GitHub Actions' tokens on github.com.
const GitHubIssuer = "https://token.actions.githubusercontent.com"

var (
	// ErrTrustedRoot: the trusted root could not be read.
	ErrTrustedRoot = errcode.New("ghattest_trusted_root", "unusable trusted root",
		"give the JSON that `gh attestation trusted-root` prints (one root per file)")
	// ErrBundle: the attestation bundle could not be read.
	ErrBundle = errcode.New("ghattest_bundle", "unusable attestation bundle",
		"give the Sigstore bundle JSON that `gh attestation download` saves")
	// ErrNotVerified: the bundle does not verify: wrong artifact, wrong
	// workflow identity, a certificate or log entry the trusted root does
	// not vouch for, or a bad signature.
	ErrNotVerified = errcode.New("ghattest_not_verified", "GitHub attestation not verified",
		"check the artifact is the one attested, the repository (and host) named, and that the trusted root is the one of the instance that signed")
)

// Options say what the attestation must be about and who must have made
// it.
type Options struct {
	// Algorithm and Digest name the artifact ("sha256", hex); Digest is
	// required.
	Algorithm, Digest string
	// Repository is the GitHub repository (OWNER/NAME) whose workflow
	// must have signed; required.
	Repository string
	// Host is the GitHub host ("" is github.com; a GitHub Enterprise
	// Server's host name otherwise), Issuer the OIDC issuer ("" is
	// GitHubIssuer on github.com, https://HOST/_services/token elsewhere).
	Host, Issuer string
}

// Result is what a verified attestation says.
type Result struct {
	// Workflow is the signing certificate's identity (the workflow file
	// and ref), Issuer its OIDC issuer.
	Workflow string `json:"workflow"`
	Issuer   string `json:"issuer"`
	// SourceRepository and SourceCommit are the certificate's claims
	// about the source the workflow ran on.
	SourceRepository string `json:"sourceRepository,omitempty"`
	SourceCommit     string `json:"sourceCommit,omitempty"`
	// PredicateType is the attested statement's predicate type.
	PredicateType string `json:"predicateType,omitempty"`
}

// VerifyFile is Verify of what `gh attestation download` saves: one bundle,
// or JSON lines of them (each a bundle or an object whose "bundle" is
// one). It returns the first that verifies, or the last refusal.
func VerifyFile(data, trustedRootJSON []byte, opts Options) (*Result, error) {
	var lines [][]byte
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			lines = append(lines, l)
		}
	}
	if len(lines) <= 1 || json.Valid(data) {
		lines = [][]byte{data}
	}
	err := fmt.Errorf("%w: no bundle in the file", ErrBundle)
	for _, l := range lines {
		var wrapped struct {
			Bundle json.RawMessage `json:"bundle"`
		}
		if json.Unmarshal(l, &wrapped) == nil && len(wrapped.Bundle) > 0 {
			l = wrapped.Bundle
		}
		var res *Result
		if res, err = Verify(l, trustedRootJSON, opts); err == nil {
			return res, nil
		}
	}
	return nil, err
}

// Verify checks bundleJSON against trustedRootJSON offline: a certificate
// chain to the root's Fulcio, an embedded SCT, a transparency log entry
// the root's logs signed, the signature over the statement, the
// statement's subject holding the artifact's digest, and a certificate
// issued to a workflow of the repository by its issuer.
func Verify(bundleJSON, trustedRootJSON []byte, opts Options) (*Result, error) {
	if opts.Digest == "" || opts.Repository == "" || strings.Count(opts.Repository, "/") != 1 {
		return nil, fmt.Errorf("%w: Options.Digest and Options.Repository (OWNER/NAME) are required", ErrNotVerified)
	}
	alg := opts.Algorithm
	if alg == "" {
		alg = "sha256"
	}
	want, err := hex.DecodeString(opts.Digest)
	if err != nil {
		return nil, fmt.Errorf("%w: digest %q is not hex", ErrNotVerified, opts.Digest)
	}
	tr, err := root.NewTrustedRootFromJSON(trustedRootJSON)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTrustedRoot, err)
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBundle, err)
	}
	host, issuer := opts.Host, opts.Issuer
	if host == "" {
		host = "github.com"
	}
	if issuer == "" {
		issuer = GitHubIssuer
		if host != "github.com" {
			issuer = "https://" + host + "/_services/token"
		}
	}
	san := "^https://" + regexp.QuoteMeta(host) + "/" + regexp.QuoteMeta(opts.Repository) + "/"
	id, err := verify.NewShortCertificateIdentity(issuer, "", "", san)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotVerified, err)
	}
	v, err := verify.NewVerifier(tr, verify.WithSignedCertificateTimestamps(1), verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTrustedRoot, err)
	}
	res, err := v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest(alg, want), verify.WithCertificateIdentity(id)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotVerified, err)
	}
	out := &Result{Issuer: issuer}
	if res.Signature != nil && res.Signature.Certificate != nil {
		c := res.Signature.Certificate
		out.Workflow, out.SourceRepository, out.SourceCommit = c.SubjectAlternativeName, c.SourceRepositoryURI, c.SourceRepositoryDigest
	}
	if res.Statement != nil {
		out.PredicateType = res.Statement.PredicateType
	}
	if out.Workflow == "" {
		return nil, errors.Join(ErrNotVerified, errors.New("no certificate identity in the verified bundle"))
	}
	return out, nil
}

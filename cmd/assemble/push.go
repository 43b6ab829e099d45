package main

import (
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/remote"
)

func pushCmd() *cli.Command {
	return &cli.Command{
		Name:      "push",
		Usage:     "verify an assembly, then upload it to an OCI registry or S3",
		ArgsUsage: "ASSEMBLY LOCATION",
		Description: `Verifies ASSEMBLY as 'assemble verify' does (the same trust flags), then
uploads the .cloud file unchanged and prints its SHA-256, the digest to
pull or deploy it by in the next stage. ASSEMBLY may itself be a location:
promotion from one registry or bucket to another reads ranges and writes
nothing to disk.

LOCATIONS:
   oci://REGISTRY/REPOSITORY:TAG   an OCI artifact (artifactType
                                   application/vnd.cloud-assembly.v1, one
                                   layer holding the file; docs/oci.md);
                                   also prints the manifest's digest
   s3://BUCKET/KEY                 PutObject with its SHA-256 checksum
                                   (multipart above 64 MiB) and metadata
                                   assemble-sha256

Credentials come the standard way: the Docker configuration and credential
helpers ('docker login') for registries, the AWS default chain (AWS_PROFILE,
AWS_ACCESS_KEY_ID, roles, AWS_ENDPOINT_URL) for S3. Plain http:// only
reaches loopback registries.

An unsigned assembly is refused unless --allow-unsigned, which pushes it
saying so.

REFERRERS (oci:// only; docs/oci.md):
   The artifact gets OCI 1.1 referrers (subject: its manifest), written
   before the tag: the assembly's signature.asc, each --bundle FILE
   (a provenance bundle from 'attest --provenance'; checked as 'verify
   --bundle' checks it, against the policy's provenance bundle-keys), and,
   pushed from a registry, every referrer the source had (a promotion
   carries them, their bytes checked against their digests). A registry
   without the referrers API gets the tag schema (tag sha256-HEX of the
   manifest). S3 keeps no referrers.

Examples:
   assemble push --keyring release.pub.asc app.cloud oci://registry.example.com/team/app:1.4.0
   assemble push --policy release-policy.yaml app.cloud s3://releases/app/1.4.0.cloud
   assemble push --policy release-policy.yaml --bundle app.sigstore.json app.cloud oci://registry.example.com/team/app:1.4.0`,
		Flags: append(trustFlags(),
			&cli.BoolFlag{Name: "allow-unsigned", Usage: "push an unsigned assembly after checking structure and manifest (authenticates nothing)"},
			&cli.StringSliceFlag{Name: "bundle", Usage: "attach the provenance bundle `FILE` (attest --provenance) to the OCI artifact, once it verified as verify --bundle does (repeatable)"},
			digestFlag, timeoutFlag(),
			jsonFlag,
			strictFlag,
			quietFlag,
			progressFlag,
		),
		Action: runPush,
	}
}

// pushResult is what push reports (docs/json/push.json). Digest is
// SHA256 under its old name, kept one release (deprecated).
type pushResult struct {
	File          string        `json:"file"`
	Location      string        `json:"location"`
	SHA256        digest.Digest `json:"sha256"`
	Digest        digest.Digest `json:"digest"`
	Size          int64         `json:"size"`
	Signed        bool          `json:"signed"`
	Authenticated bool          `json:"authenticated"`
	Manifest      digest.Digest `json:"manifest,omitzero"`
	Version       string        `json:"version,omitempty"`
	ETag          string        `json:"etag,omitempty"`
	Multipart     bool          `json:"multipart,omitempty"`
	Replaced      bool          `json:"replaced,omitempty"`
	// Referrers are the OCI referrers attached (docs/oci.md).
	Referrers []referrerResult `json:"referrers,omitempty"`
}

// referrerResult is one referrer push attached.
type referrerResult struct {
	ArtifactType string `json:"artifactType"`
	Manifest     string `json:"manifest"`
}

func runPush(c *cli.Context) error {
	if c.NArg() != 2 {
		return withHint(usagef("push takes ASSEMBLY and LOCATION, got %d arguments", c.NArg()), "assemble push app.cloud oci://REGISTRY/REPOSITORY:TAG")
	}
	name, dest := c.Args().Get(0), c.Args().Get(1)
	if !remote.IsLocation(dest) {
		return withHint(usagef("push: %q is not a location", dest), "push to oci://REGISTRY/REPOSITORY:TAG or s3://BUCKET/KEY")
	}
	dl, err := remote.Parse(dest)
	if err != nil {
		return err
	}
	if len(c.StringSlice("bundle")) > 0 && dl.Scheme != remote.SchemeOCI {
		return withHint(usagef("push: --bundle attaches to an OCI artifact; %s keeps no referrers", dl.Scheme+"://"), "push the assembly and its bundles to oci://REGISTRY/REPOSITORY:TAG, or keep the bundle beside the object yourself")
	}
	res, err := verifyAssembly(c, name, c.Bool("allow-unsigned"))
	defer res.close()
	if err != nil {
		return err
	}
	if !res.Signed {
		warnf(c, "pushing %s UNSIGNED (--allow-unsigned): whoever pulls it must pass --allow-unsigned too", res.File)
	}
	raw := res.checked.Reader.Raw()
	f := remote.File{R: raw, Size: res.Size, SHA256: res.SHA256, Title: filepath.Base(name)}
	if remote.IsLocation(name) {
		// Promotion: the file is named after the source's last segment,
		// and from a registry its manifest is copied as it is.
		src, _ := remote.Parse(name)
		f.Title = src.Base()
		if o, ok := res.assembly.Source().(*remote.Object); ok {
			f.Manifest = o.Manifest()
		}
	}
	ctx, cancel := remoteContext(c)
	defer cancel()
	if dl.Scheme == remote.SchemeOCI && res.assembly != nil {
		if f.Referrers, err = res.assembly.Referrers(ctx); err != nil {
			return onFile("push", res.File, err)
		}
	} else if o, ok := res.assembly.Source().(*remote.Object); ok && o.Manifest() != nil {
		// S3 keeps no referrers: say which provenance bundles stay behind.
		if refs, err := o.Referrers(ctx); err == nil {
			n := 0
			for _, r := range refs {
				if r.ArtifactType == remote.BundleArtifactType {
					n++
				}
			}
			if n > 0 {
				warnf(c, "%s has %s attached; %s keeps no referrers, so they are not carried (assemble pull from %s writes them beside the file)", res.File, plural.Count(n, "provenance bundle"), shown(dest), res.File)
			}
		}
	}
	prog := newProgress(c, "pushing "+res.File)
	p, err := remote.Push(ctx, dest, f, &remote.Options{Progress: prog.Func()})
	prog.Done()
	if err != nil {
		return onFile("push", res.File, err)
	}
	out := pushResult{File: res.File, Location: shown(dest), SHA256: p.Digest, Digest: p.Digest, Size: res.Size, Signed: res.Signed, Authenticated: res.Authenticated,
		Manifest: p.Manifest, Version: p.Version, ETag: p.ETag, Multipart: p.Multipart, Replaced: p.Replaced}
	for _, r := range p.Referrers {
		out.Referrers = append(out.Referrers, referrerResult{ArtifactType: r.ArtifactType, Manifest: r.Manifest})
	}
	if c.Bool("json") {
		return printJSON(c, out)
	}
	what := "signed"
	if !res.Signed {
		what = "UNSIGNED"
	}
	printf(c, c.App.Writer, "pushed %s (%s) to %s\n%s\n", res.File, what, out.Location, p.Digest)
	if p.Replaced {
		printf(c, c.App.Writer, "replaced the object that was at %s\n", out.Location)
	}
	if !p.Manifest.IsZero() {
		printf(c, c.App.Writer, "manifest %s: pull it by oci://%s@%s\n", p.Manifest, dl.Ref.Context().Name(), p.Manifest)
	}
	for _, r := range p.Referrers {
		printf(c, c.App.Writer, "referrer %s (%s)\n", r.Manifest, r.ArtifactType)
	}
	if p.Version != "" {
		printf(c, c.App.Writer, "version %s: pull it by %s?versionId=%s\n", p.Version, out.Location, p.Version)
	}
	return nil
}

package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	ggcr "github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"

	"github.com/cloud-assembly/assemble/internal/testenv/ocireg"
)

// referrersRegistry is go-containerregistry's registry with its
// referrers API on (api) or off (then writers keep the tag schema); wrap,
// when set, may answer a request instead. calls counts the requests to
// the referrers API.
func referrersRegistry(t *testing.T, api bool, wrap func(w http.ResponseWriter, r *http.Request) bool) (host string, calls *atomic.Int64) {
	t.Helper()
	calls = new(atomic.Int64)
	srv := ocireg.InProcess(api, func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/referrers/") {
			calls.Add(1)
		}
		return wrap != nil && wrap(w, r)
	})
	t.Cleanup(srv.Close)
	return ocireg.Host(srv), calls
}

func testReferrers() []Referrer {
	return []Referrer{
		{ArtifactType: BundleArtifactType, Data: []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","n":1}`),
			Annotations: map[string]string{"dev.sigstore.bundle.content": "dsse-envelope"}},
		{ArtifactType: SignatureArtifactType, Data: []byte("-----BEGIN PGP SIGNED MESSAGE-----\n...\n")},
		{ArtifactType: BundleArtifactType, Data: []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","n":2}`)},
	}
}

// pushWithReferrers pushes content with refs to loc and checks what Push
// says it attached.
func pushWithReferrers(t *testing.T, loc string, content []byte, refs []Referrer) *Pushed {
	t.Helper()
	p, err := Push(context.Background(), loc, File{R: bytes.NewReader(content), Size: int64(len(content)), SHA256: sha(content), Title: "app.cloud", Referrers: refs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Referrers) != len(refs) {
		t.Fatalf("pushed %d referrers, want %d: %+v", len(p.Referrers), len(refs), p.Referrers)
	}
	return p
}

// readReferrers opens loc and returns its referrers, by data.
func readReferrers(t *testing.T, loc string) (*Object, map[string]Referrer) {
	t.Helper()
	o, err := Open(context.Background(), loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	refs, err := o.Referrers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Referrer{}
	for _, r := range refs {
		got[string(r.Data)] = r
	}
	return o, got
}

// checkReferrers: the referrers read are those pushed (type, bytes,
// annotations), each found at the manifest Push named.
func checkReferrers(t *testing.T, host string, p *Pushed, want []Referrer, got map[string]Referrer) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d referrers, pushed %d", len(got), len(want))
	}
	for i, w := range want {
		g, ok := got[string(w.Data)]
		if !ok || g.ArtifactType != w.ArtifactType || fmt.Sprint(g.Annotations) != fmt.Sprint(w.Annotations) {
			t.Errorf("referrer %d: read %+v, pushed %+v", i, g, w)
		}
		if wl := "oci://" + host + "/team/app@" + p.Referrers[i].Manifest; g.Location != wl {
			t.Errorf("referrer %d at %s, pushed to %s", i, g.Location, wl)
		}
	}
}

// hasFallbackTag reports whether the referrers tag schema's tag of the
// manifest exists.
func hasFallbackTag(t *testing.T, host, manifest string) bool {
	_, err := ggcr.Get(mustRef(t, host+"/team/app:"+strings.Replace(manifest, ":", "-", 1)))
	return err == nil
}

// TestReferrers pushes an assembly with referrers, and reads them back,
// to go-containerregistry's registry with and without the referrers API
// and to Debian's docker-registry (no API: the tag schema).
func TestReferrers(t *testing.T) {
	for _, tc := range []struct {
		name string
		api  bool
		host func(t *testing.T) (string, *atomic.Int64)
	}{
		{"ggcr-referrers-api", true, func(t *testing.T) (string, *atomic.Int64) { return referrersRegistry(t, true, nil) }},
		{"ggcr-tag-schema", false, func(t *testing.T) (string, *atomic.Int64) { return referrersRegistry(t, false, nil) }},
		{"docker-registry", false, func(t *testing.T) (string, *atomic.Int64) { return dockerRegistry(t), nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host, calls := tc.host(t)
			content := randomBytes(t, 100<<10+3)
			want := testReferrers()
			p := pushWithReferrers(t, "oci://"+host+"/team/app:v1", content, want)
			_, got := readReferrers(t, "oci://"+host+"/team/app:v1")
			checkReferrers(t, host, p, want, got)
			// By the manifest's digest too; by the file's (a blob, no
			// manifest) there are none to find.
			_, got = readReferrers(t, "oci://"+host+"/team/app@"+p.Manifest.String())
			checkReferrers(t, host, p, want, got)
			if _, got := readReferrers(t, "oci://"+host+"/team/app@"+sha(content).String()); len(got) != 0 {
				t.Errorf("a blob read by its digest has %d referrers", len(got))
			}
			if fb := hasFallbackTag(t, host, p.Manifest.String()); fb == tc.api {
				t.Errorf("referrers API %v, tag schema's tag present %v", tc.api, fb)
			}
			if calls != nil && calls.Load() == 0 {
				t.Error("the referrers API was never asked")
			}
			// Another tool sees them: go-containerregistry's Referrers
			// lists each manifest, with its artifact type.
			idx, err := ggcr.Referrers(mustRef(t, host+"/team/app@"+p.Manifest.String()).Context().Digest(p.Manifest.String()))
			if err != nil {
				t.Fatal(err)
			}
			im, _ := idx.IndexManifest()
			listed := map[string]bool{}
			for _, d := range im.Manifests {
				listed[d.Digest.String()] = true
			}
			for _, r := range p.Referrers {
				if !listed[r.Manifest] {
					t.Errorf("referrer %s not listed: %+v", r.Manifest, im.Manifests)
				}
			}
			// Pushing again attaches nothing twice.
			pushWithReferrers(t, "oci://"+host+"/team/app:v1", content, want)
			if _, got := readReferrers(t, "oci://"+host+"/team/app:v1"); len(got) != len(want) {
				t.Errorf("after a second push: %d referrers", len(got))
			}
		})
	}
}

// TestReferrerManifest: the referrer's manifest is the documented one
// (docs/oci.md), and depends on the referrer and subject alone.
func TestReferrerManifest(t *testing.T) {
	subject := v1.Descriptor{MediaType: "application/vnd.oci.image.manifest.v1+json", Size: 500, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}}
	r := Referrer{ArtifactType: BundleArtifactType, Data: []byte("{}\n")}
	b, err := referrerManifest(subject, r)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := referrerManifest(subject, r)
	if !bytes.Equal(b, b2) {
		t.Error("the same referrer gave two manifests")
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	layer := m["layers"].([]any)[0].(map[string]any)
	if m["artifactType"] != BundleArtifactType || m["config"].(map[string]any)["mediaType"] != EmptyConfigMediaType ||
		layer["mediaType"] != BundleArtifactType || layer["size"] != 3.0 || m["subject"].(map[string]any)["digest"] != subject.Digest.String() {
		t.Errorf("referrer manifest %s", b)
	}
	for _, bad := range []Referrer{{ArtifactType: "text/plain", Data: []byte("x")}, {ArtifactType: BundleArtifactType}, {ArtifactType: BundleArtifactType, Data: make([]byte, maxReferrerSize+1)}} {
		if _, err := referrerManifest(subject, bad); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s of %d bytes: %v, want ErrUnsupported", bad.ArtifactType, len(bad.Data), err)
		}
	}
}

// TestPromoteReferrers: a promotion from one registry to another (with
// and without the referrers API each way, and to Debian's registry)
// carries the referrers: the same manifests, so the same digests.
func TestPromoteReferrers(t *testing.T) {
	hosts := map[string]func(t *testing.T) string{
		"api":    func(t *testing.T) string { h, _ := referrersRegistry(t, true, nil); return h },
		"tags":   func(t *testing.T) string { h, _ := referrersRegistry(t, false, nil); return h },
		"docker": dockerRegistry,
	}
	for _, pair := range [][2]string{{"api", "tags"}, {"tags", "api"}, {"api", "docker"}, {"docker", "api"}} {
		t.Run(pair[0]+"-to-"+pair[1], func(t *testing.T) {
			a, b := hosts[pair[0]](t), hosts[pair[1]](t)
			content := randomBytes(t, 70<<10)
			want := testReferrers()
			p := pushWithReferrers(t, "oci://"+a+"/team/app:v1", content, want)
			o, _ := readReferrers(t, "oci://"+a+"/team/app:v1")
			refs, _ := o.Referrers(context.Background())
			p2, err := Push(context.Background(), "oci://"+b+"/team/app:v1", File{R: o, Size: o.Size(), SHA256: sha(content), Title: "app", Manifest: o.Manifest(), Referrers: refs}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if p2.Manifest != p.Manifest {
				t.Errorf("promoted manifest %s, source %s", p2.Manifest, p.Manifest)
			}
			_, got := readReferrers(t, "oci://"+b+"/team/app:v1")
			if len(refs) != len(want) {
				t.Fatalf("read %d referrers from the source, pushed %d", len(refs), len(want))
			}
			checkReferrers(t, b, p2, refs, got)
			same := map[string]bool{}
			for _, r := range p.Referrers {
				same[r.Manifest] = true
			}
			for _, r := range p2.Referrers {
				if !same[r.Manifest] {
					t.Errorf("promoted referrer %s is not one of the source's %+v", r.Manifest, p.Referrers)
				}
			}
		})
	}
}

// TestHostileReferrers: a registry that hands back a referrer whose
// bytes are not those its descriptor names, or one about another
// subject, is refused, naming what; nothing of it is returned.
func TestHostileReferrers(t *testing.T) {
	content := randomBytes(t, 50<<10)
	want := testReferrers()[:1]
	for _, tc := range []struct {
		name string
		// tamper answers a request of the referrer's manifest m (digest
		// md) or its blob (digest bd), or returns false.
		tamper func(w http.ResponseWriter, r *http.Request, md, bd string, m []byte) bool
		err    error
	}{
		{"blob-bytes", func(w http.ResponseWriter, r *http.Request, md, bd string, m []byte) bool {
			if strings.HasSuffix(r.URL.Path, "/blobs/"+bd) && r.Method == http.MethodGet {
				b := bytes.Clone(want[0].Data)
				b[5] ^= 1
				w.Write(b)
				return true
			}
			return false
		}, ErrDigestMismatch},
		{"blob-longer", func(w http.ResponseWriter, r *http.Request, md, bd string, m []byte) bool {
			if strings.HasSuffix(r.URL.Path, "/blobs/"+bd) && r.Method == http.MethodGet {
				w.Write(append(bytes.Clone(want[0].Data), "more"...))
				return true
			}
			return false
		}, ErrDigestMismatch},
		{"manifest-bytes", func(w http.ResponseWriter, r *http.Request, md, bd string, m []byte) bool {
			if strings.HasSuffix(r.URL.Path, "/manifests/"+md) && r.Method == http.MethodGet {
				w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
				w.Write(bytes.Replace(m, []byte(`"schemaVersion":2`), []byte(`"schemaVersion":2 `), 1))
				return true
			}
			return false
		}, ErrDigestMismatch},
		{"other-subject", func(w http.ResponseWriter, r *http.Request, md, bd string, m []byte) bool {
			return false // set up below: a referrer of another manifest listed under this one
		}, ErrBadResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type target struct {
				md, bd string
				m      []byte
			}
			var tg atomic.Pointer[target]
			var blobGets atomic.Int64
			host, _ := referrersRegistry(t, false, func(w http.ResponseWriter, r *http.Request) bool {
				g := tg.Load()
				if g == nil {
					return false
				}
				if strings.HasSuffix(r.URL.Path, "/blobs/"+g.bd) && r.Method == http.MethodGet {
					blobGets.Add(1)
				}
				return tc.tamper(w, r, g.md, g.bd, g.m)
			})
			loc := "oci://" + host + "/team/app:v1"
			p := pushWithReferrers(t, loc, content, want)
			desc, err := ggcr.Get(mustRef(t, host+"/team/app@"+p.Referrers[0].Manifest))
			if err != nil {
				t.Fatal(err)
			}
			tg.Store(&target{md: p.Referrers[0].Manifest, bd: want[0].Digest(), m: desc.Manifest})
			if tc.name == "other-subject" {
				// Another assembly's referrer, listed in this one's tag
				// schema index.
				other := randomBytes(t, 1000)
				po := pushWithReferrers(t, "oci://"+host+"/team/app:other", other, []Referrer{{ArtifactType: BundleArtifactType, Data: []byte(`{"other":1}`)}})
				od, _ := ggcr.Get(mustRef(t, host+"/team/app@"+po.Referrers[0].Manifest))
				idxTag := mustRef(t, host+"/team/app:"+strings.Replace(p.Manifest.String(), ":", "-", 1))
				idx, err := ggcr.Index(idxTag)
				if err != nil {
					t.Fatal(err)
				}
				im, _ := idx.IndexManifest()
				im.Manifests = append(im.Manifests, v1.Descriptor{MediaType: od.MediaType, Size: od.Size, Digest: od.Digest, ArtifactType: BundleArtifactType})
				raw, _ := json.Marshal(im)
				req, _ := http.NewRequest(http.MethodPut, "http://"+host+"/v2/team/app/manifests/"+idxTag.Identifier(), bytes.NewReader(raw))
				req.Header.Set("Content-Type", string(im.MediaType))
				if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
					t.Fatalf("rewriting the tag schema's index: %v %v", resp, err)
				}
			}
			o, err := Open(context.Background(), loc, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			refs, err := o.Referrers(context.Background())
			if !errors.Is(err, tc.err) || refs != nil {
				t.Fatalf("referrers %d, error %v; want %v", len(refs), err, tc.err)
			}
			if tc.err == ErrDigestMismatch && !strings.Contains(err.Error(), "descriptor") {
				t.Errorf("the error does not say what it was checked against: %v", err)
			}
			// Read once: asking again asks the registry nothing.
			n := blobGets.Load()
			if _, err2 := o.Referrers(context.Background()); err2 == nil || blobGets.Load() != n {
				t.Errorf("second Referrers: %v, blob requests %d then %d", err2, n, blobGets.Load())
			}
		})
	}
}

// TestReferrersBounded: a listing of more referrers than the bound, or
// one whose descriptor claims more bytes than a referrer may have, is
// refused before anything of it is read.
func TestReferrersBounded(t *testing.T) {
	content := randomBytes(t, 20<<10)
	var manifestGets atomic.Int64
	var listing atomic.Pointer[[]byte]
	host, _ := referrersRegistry(t, true, func(w http.ResponseWriter, r *http.Request) bool {
		if l := listing.Load(); strings.Contains(r.URL.Path, "/referrers/") && l != nil {
			w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
			w.Write(*l)
			return true
		}
		if strings.Contains(r.URL.Path, "/manifests/sha256:") {
			manifestGets.Add(1)
		}
		return false
	})
	loc := "oci://" + host + "/team/app:v1"
	pushWithReferrers(t, loc, content, nil)
	many := v1.IndexManifest{SchemaVersion: 2, MediaType: "application/vnd.oci.image.index.v1+json"}
	for i := range maxReferrers + 1 {
		many.Manifests = append(many.Manifests, v1.Descriptor{MediaType: "application/vnd.oci.image.manifest.v1+json", Size: 10,
			Digest: v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%064x", i)}, ArtifactType: BundleArtifactType})
	}
	huge := v1.IndexManifest{SchemaVersion: 2, MediaType: "application/vnd.oci.image.index.v1+json", Manifests: []v1.Descriptor{{
		MediaType: "application/vnd.oci.image.manifest.v1+json", Size: 1 << 40, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}, ArtifactType: BundleArtifactType}}}
	for _, im := range []v1.IndexManifest{many, huge} {
		l, _ := json.Marshal(im)
		listing.Store(&l)
		o, err := Open(context.Background(), loc, nil)
		if err != nil {
			t.Fatal(err)
		}
		before := manifestGets.Load()
		_, err = o.Referrers(context.Background())
		o.Close()
		if !errors.Is(err, ErrBadResponse) || manifestGets.Load() != before {
			t.Errorf("%d referrers listed: %v, %d manifest requests; want ErrBadResponse and none", len(im.Manifests), err, manifestGets.Load()-before)
		}
	}
}

// TestReferrersProperty: over random sets of referrers (types, sizes,
// repeats) and both kinds of registry, what is read back is what was
// pushed, each once; and when the registry changes one byte of one
// referrer manifest or blob on its way out, the read fails with
// ErrDigestMismatch and returns nothing.
func TestReferrersProperty(t *testing.T) {
	rnd := rand.New(rand.NewPCG(32, 2026))
	content := randomBytes(t, 4096)
	type answer struct {
		path string
		body []byte
	}
	for i := range 40 {
		var refs []Referrer
		want := map[string]string{} // data: type
		for range 1 + rnd.IntN(5) {
			if len(refs) > 0 && rnd.IntN(4) == 0 {
				refs = append(refs, refs[rnd.IntN(len(refs))]) // a repeat
				continue
			}
			data := make([]byte, 1+rnd.IntN(5000))
			for j := range data {
				data[j] = byte(rnd.IntN(256))
			}
			typ := BundleArtifactType
			if rnd.IntN(2) == 0 {
				typ = SignatureArtifactType
			}
			refs = append(refs, Referrer{ArtifactType: typ, Data: data})
			want[string(data)] = typ
		}
		var changed atomic.Pointer[answer]
		host, _ := referrersRegistry(t, rnd.IntN(2) == 0, func(w http.ResponseWriter, r *http.Request) bool {
			if a := changed.Load(); a != nil && r.Method == http.MethodGet && r.URL.Path == a.path {
				w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
				w.Write(a.body)
				return true
			}
			return false
		})
		loc := "oci://" + host + "/p/app:v1"
		p, err := Push(context.Background(), loc, File{R: bytes.NewReader(content), Size: int64(len(content)), SHA256: sha(content), Title: "app.cloud", Referrers: refs}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Referrers) != len(want) {
			t.Fatalf("case %d: pushed %d referrers of %d distinct", i, len(p.Referrers), len(want))
		}
		_, got := readReferrers(t, loc)
		if len(got) != len(want) {
			t.Fatalf("case %d: read %d referrers, pushed %d distinct", i, len(got), len(want))
		}
		for d, typ := range want {
			if got[d].ArtifactType != typ {
				t.Fatalf("case %d: a %s referrer read as %q", i, typ, got[d].ArtifactType)
			}
		}
		// One byte of one referrer's manifest or blob changed.
		k := p.Referrers[rnd.IntN(len(p.Referrers))]
		path := "/v2/p/app/manifests/" + k.Manifest
		if rnd.IntN(2) == 0 {
			for _, r := range refs {
				if m, _ := referrerManifest(v1.Descriptor{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: mustHash(t, p.Manifest.String()), Size: manifestSize(t, host, p.Manifest.String())}, r); m != nil && sha(m).String() == k.Manifest {
					path = "/v2/p/app/blobs/" + r.Digest()
				}
			}
		}
		t.Logf("case %d: changing %s", i, path)
		resp, err := http.Get("http://" + host + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Fatalf("case %d: %s: %s", i, path, resp.Status)
		}
		body[rnd.IntN(len(body))] ^= byte(1 + rnd.IntN(255))
		changed.Store(&answer{path, body})
		o, err := Open(context.Background(), loc, nil)
		if err != nil {
			t.Fatal(err)
		}
		refsRead, err := o.Referrers(context.Background())
		o.Close()
		if !errors.Is(err, ErrDigestMismatch) || refsRead != nil {
			t.Fatalf("case %d: %s changed: %d referrers, %v; want ErrDigestMismatch", i, path, len(refsRead), err)
		}
	}
}

func mustHash(t *testing.T, s string) v1.Hash {
	h, err := v1.NewHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// manifestSize is the size of the manifest of digest d.
func manifestSize(t *testing.T, host, d string) int64 {
	desc, err := ggcr.Get(mustRef(t, host+"/p/app@"+d))
	if err != nil {
		t.Fatal(err)
	}
	return desc.Size
}

// TestForeignReferrersLeftAlone: another tool's referrer of the same
// manifest (an SBOM) is neither returned nor a reason to fail, with and
// without the referrers API.
func TestForeignReferrersLeftAlone(t *testing.T) {
	for _, api := range []bool{true, false} {
		host, _ := referrersRegistry(t, api, nil)
		content := randomBytes(t, 3000)
		loc := "oci://" + host + "/team/app:v1"
		p := pushWithReferrers(t, loc, content, testReferrers()[:1])
		desc, err := ggcr.Get(mustRef(t, host+"/team/app@"+p.Manifest.String()))
		if err != nil {
			t.Fatal(err)
		}
		sbom := []byte(`{"spdxVersion":"SPDX-2.3"}`)
		repo := mustRef(t, host+"/team/app:v1").Context()
		if err := ggcr.WriteLayer(repo, static.NewLayer(sbom, "application/spdx+json")); err != nil {
			t.Fatal(err)
		}
		m, _ := json.Marshal(v1.Manifest{SchemaVersion: 2, MediaType: "application/vnd.oci.image.manifest.v1+json", ArtifactType: "application/spdx+json", Config: emptyConfig,
			Layers:  []v1.Descriptor{{MediaType: "application/spdx+json", Size: int64(len(sbom)), Digest: mustHash(t, sha(sbom).String())}},
			Subject: &v1.Descriptor{MediaType: desc.MediaType, Size: desc.Size, Digest: desc.Digest}})
		if err := ggcr.Put(repo.Digest(sha(m).String()), rawManifest{m, "application/vnd.oci.image.manifest.v1+json"}); err != nil {
			t.Fatal(err)
		}
		_, got := readReferrers(t, loc)
		if len(got) != 1 {
			t.Errorf("api %v: %d referrers read, want only assemble's one", api, len(got))
		}
	}
}

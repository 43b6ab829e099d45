package main

// Issue 22 for deploy and status (issue 20): they take a remote location
// wherever they take a file, read every byte they send from it (verified),
// and name the location as given.

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/testenv/moto"
	"github.com/cloud-assembly/assemble/remote"
)

// TestDeployFromLocation: a signed assembly (a stack and a file droplet)
// pushed to s3:// on moto_server, and to oci:// on go-containerregistry's
// registry, deploys (--plan first) and compares (status) straight from the
// location: the stack and the object exist, the output and --json name the
// location as given, and the sha256 is the local file's. A tampered copy
// put at another location (past push, which would refuse it) is refused
// by deploy with digest_mismatch and changes nothing.
// moto records stacks without running their resources; its change sets
// publish no outputs (this stack has none).
func TestDeployFromLocation(t *testing.T) {
	moto.Env(t)
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle, o.DisableLogOutputChecksumValidationSkipped = true, true })
	cfn := cloudformation.NewFromConfig(cfg)
	keyring, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys", "trusted.asc"))
	store := "assemblies-" + randHex(t)
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(store)}); err != nil {
		t.Fatal(err)
	}
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")

	// assemble builds and signs an assembly of a stack and a file droplet
	// with names of their own; it returns the signed file, its hex
	// SHA-256, the stack's name and the file droplet's bucket.
	assemble := func(t *testing.T) (signed, sum, stack, bucket string) {
		u := randHex(t)
		stack, bucket = "remote-"+u, "remote-"+u
		if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		unsigned := filepath.Join(dir, "unsigned.cloud")
		writeCloud(t, unsigned, map[string]string{
			"manifest.json": deployManifest(t, u, bucket, func(m map[string]any) {
				m["droplets"].(map[string]any)["Stack"].(map[string]any)["properties"].(map[string]any)["stackName"] = stack
			}),
			"t.yaml": "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n",
			"f.txt":  "content of f.txt, " + u,
		})
		signed = sign(t, dir, unsigned)
		b, err := os.ReadFile(signed)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		return signed, hex.EncodeToString(h[:]), stack, bucket
	}

	// stackTag returns the stack's assemble:sha256 tag ("" when there is
	// no such stack, or it is deleted).
	stackTag := func(t *testing.T, stack string) string {
		out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stack)})
		if err != nil || len(out.Stacks) == 0 || out.Stacks[0].StackStatus == cfntypes.StackStatusDeleteComplete {
			return ""
		}
		for _, tag := range out.Stacks[0].Tags {
			if aws.ToString(tag.Key) == "assemble:sha256" {
				return aws.ToString(tag.Value)
			}
		}
		return "untagged"
	}
	objects := func(t *testing.T, bucket string) []string {
		out, err := s3c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, o := range out.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
		return keys
	}

	for _, scheme := range []string{"s3", "oci"} {
		t.Run(scheme, func(t *testing.T) {
			signed, sum, stack, bucket := assemble(t)
			loc := "s3://" + store + "/" + stack + "/app.cloud"
			if scheme == "oci" {
				loc = "oci://" + host + "/" + stack + "/app:1.2.0"
			}
			code, stdout, stderr := runRemoteCLI("push", "--keyring", keyring, signed, loc)
			if code != 0 || !strings.Contains(stdout, "sha256:"+sum) {
				t.Fatalf("push: exit %d\n%s%s", code, stdout, stderr)
			}
			pushed := stdout

			// --plan changes nothing, and names the location and the
			// file's SHA-256.
			code, stdout, stderr = runRemoteCLI("deploy", "--keyring", keyring, "--plan", loc)
			if code != 0 {
				t.Fatalf("deploy --plan: exit %d\n%s%s", code, stdout, stderr)
			}
			if want := loc + ": sha256:" + sum + ", signed by"; !strings.Contains(stdout, want) {
				t.Errorf("deploy --plan does not say %q:\n%s", want, stdout)
			}
			if !strings.Contains(stdout, "\n2 of 2 droplets change\n") {
				t.Errorf("deploy --plan does not count the changes:\n%s", stdout)
			}
			if tag := stackTag(t, stack); tag != "" || len(objects(t, bucket)) != 0 {
				t.Fatalf("--plan left stack tag %q, objects %v", tag, objects(t, bucket))
			}

			code, stdout, stderr = runRemoteCLI("deploy", "--keyring", keyring, "--json", loc)
			if code != 0 {
				t.Fatalf("deploy: exit %d\n%s%s", code, stdout, stderr)
			}
			checkRemoteJSON(t, "deploy", code, stdout)
			var dep struct {
				File, SHA256  string
				Authenticated bool
				Droplets      []struct{ ID, Outcome string }
			}
			if err := json.Unmarshal([]byte(stdout), &dep); err != nil {
				t.Fatal(err)
			}
			if dep.File != loc || dep.SHA256 != "sha256:"+sum || !dep.Authenticated {
				t.Errorf("deploy --json: file %q sha256 %q authenticated %v, want %q %q true", dep.File, dep.SHA256, dep.Authenticated, loc, sum)
			}
			outcomes := map[string]string{}
			for _, d := range dep.Droplets {
				outcomes[d.ID] = d.Outcome
			}
			if outcomes["Stack"] != "created" || outcomes["File"] != "uploaded" {
				t.Errorf("outcomes %v\n%s", outcomes, stdout)
			}
			if tag := stackTag(t, stack); tag != sum {
				t.Errorf("stack %s: assemble:sha256 %q, want %q", stack, tag, sum)
			}
			obj, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("f.txt")})
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(obj.Body)
			obj.Body.Close()
			if !strings.HasPrefix(string(body), "content of f.txt, ") || obj.Metadata["assemble-sha256"] != sum {
				t.Errorf("object f.txt: %q, metadata %v", body, obj.Metadata)
			}

			code, stdout, stderr = runRemoteCLI("status", "--keyring", keyring, loc)
			if code != 0 {
				t.Fatalf("status: exit %d\n%s%s", code, stdout, stderr)
			}
			for _, want := range []string{loc + ": sha256:" + sum + ", signed by", loc + ": what is deployed in account 123456789012 matches the assembly"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("status does not say %q:\n%s", want, stdout)
				}
			}
			code, stdout, stderr = runRemoteCLI("status", "--keyring", keyring, "--json", loc)
			if code != 0 {
				t.Fatalf("status --json: exit %d\n%s%s", code, stdout, stderr)
			}
			checkRemoteJSON(t, "status", code, stdout)
			var st struct {
				File, SHA256 string
				Match        bool
			}
			json.Unmarshal([]byte(stdout), &st)
			if st.File != loc || st.SHA256 != "sha256:"+sum || !st.Match {
				t.Errorf("status --json: file %q sha256 %q match %v, want %q %q true", st.File, st.SHA256, st.Match, loc, sum)
			}
			if scheme != "oci" {
				return
			}
			// The next stage deploys by the manifest digest push printed:
			// the same bytes, so nothing changes.
			m := regexp.MustCompile(`pull it by (oci://\S+@sha256:[0-9a-f]{64})`).FindStringSubmatch(pushed)
			if m == nil {
				t.Fatalf("push names no manifest digest:\n%s", pushed)
			}
			code, stdout, stderr = runRemoteCLI("deploy", "--keyring", keyring, "--json", m[1])
			if code != 0 {
				t.Fatalf("deploy %s: exit %d\n%s%s", m[1], code, stdout, stderr)
			}
			dep.Droplets = nil
			json.Unmarshal([]byte(stdout), &dep)
			if dep.File != m[1] || dep.SHA256 != "sha256:"+sum || len(dep.Droplets) != 2 {
				t.Errorf("deploy --json: file %q sha256 %q, want %q %q\n%s", dep.File, dep.SHA256, m[1], sum, stdout)
			}
			for _, d := range dep.Droplets {
				if d.Outcome != string(deploy.Unchanged) {
					t.Errorf("deploy again by digest: %s %s, want %s", d.ID, d.Outcome, deploy.Unchanged)
				}
			}
		})
	}

	// Issue 30, item 4: --digest names the assembly; another digest,
	// for the file or its location, changes nothing (deploy, --plan or
	// not, and status), whatever the assembly holds.
	t.Run("wrong digest", func(t *testing.T) {
		signed, _, stack, bucket := assemble(t)
		loc := "oci://" + host + "/" + stack + "/app:1.0"
		if code, stdout, stderr := runRemoteCLI("push", "--keyring", keyring, signed, loc); code != 0 {
			t.Fatalf("push: exit %d\n%s%s", code, stdout, stderr)
		}
		wrong := "sha256:" + strings.Repeat("ab", 32)
		for _, name := range []string{signed, loc} {
			for _, args := range [][]string{
				{"deploy", "--keyring", keyring, "--json", "--digest", wrong, "--plan", name},
				{"deploy", "--keyring", keyring, "--json", "--digest", wrong, name},
				{"status", "--keyring", keyring, "--json", "--digest", wrong, name},
			} {
				code, stdout, stderr := runRemoteCLI(args...)
				var obj struct{ Error struct{ Code string } }
				json.Unmarshal([]byte(stdout), &obj)
				if code != 1 || (obj.Error.Code != "wrong_digest" && obj.Error.Code != "remote_digest_mismatch") {
					t.Errorf("%v: exit %d, code %q\n%s%s", args, code, obj.Error.Code, stdout, stderr)
				}
			}
		}
		if tag := stackTag(t, stack); tag != "" || len(objects(t, bucket)) != 0 {
			t.Fatalf("a wrong --digest left stack tag %q, objects %v", tag, objects(t, bucket))
		}
	})

	// Issue 26: served by a server whose second delivery of any byte is
	// the tampered copy's (no validator), the assembly deploys as signed:
	// each byte is fetched once, and the object uploaded is the signed
	// f.txt.
	t.Run("second delivery", func(t *testing.T) {
		signed, sum, stack, bucket := assemble(t)
		good, err := os.ReadFile(signed)
		if err != nil {
			t.Fatal(err)
		}
		s, url := newSecondServer(t, good, tamperedCopy(t, signed), false)
		code, stdout, stderr := runRemoteCLI("deploy", "--keyring", keyring, "--json", url)
		if code != 0 {
			t.Fatalf("deploy: exit %d\n%s%s", code, stdout, stderr)
		}
		if s.again.Load() != 0 {
			t.Errorf("%d bytes were delivered a second time", s.again.Load())
		}
		if tag := stackTag(t, stack); tag != sum {
			t.Errorf("stack %s: assemble:sha256 %q, want %q", stack, tag, sum)
		}
		obj, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("f.txt")})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(obj.Body)
		obj.Body.Close()
		if !strings.HasPrefix(string(body), "content of f.txt, ") {
			t.Errorf("object f.txt: %q, not the signed content", body)
		}
	})

	// A tampered copy of a signed assembly, put where a pipeline reads
	// from without 'assemble push' (which verifies first and would refuse
	// it): deploy refuses it, with or without --plan, and the stack and
	// the object it names are not made.
	t.Run("tampered", func(t *testing.T) {
		signed, _, stack, bucket := assemble(t)
		bad := tamperedCopy(t, signed)
		for _, loc := range []string{"s3://" + store + "/" + stack + "/tampered.cloud", "oci://" + host + "/" + stack + "/app:tampered"} {
			if _, err := remote.Push(ctx, loc, remote.File{R: bytes.NewReader(bad), Size: int64(len(bad)), SHA256: digest.Of(bad)}, nil); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"deploy", "--keyring", keyring, "--json", "--plan", loc},
				{"deploy", "--keyring", keyring, "--json", loc},
				{"status", "--keyring", keyring, "--json", loc},
			} {
				code, stdout, stderr := runRemoteCLI(args...)
				checkRemoteJSON(t, args[0], code, stdout)
				var obj struct {
					File  string
					Error struct{ Code, Message string }
				}
				json.Unmarshal([]byte(stdout), &obj)
				if code != 1 || obj.Error.Code != "digest_mismatch" {
					t.Errorf("%v: exit %d, code %q, want 1 and digest_mismatch\n%s%s", args, code, obj.Error.Code, stdout, stderr)
				}
				if obj.File != loc || !strings.Contains(obj.Error.Message, loc) {
					t.Errorf("%v: file %q, message %q: want both to name %s", args, obj.File, obj.Error.Message, loc)
				}
			}
		}
		stacks, err := cfn.ListStacks(ctx, &cloudformation.ListStacksInput{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stacks.StackSummaries {
			if aws.ToString(s.StackName) == stack {
				t.Errorf("stack %s made (%s)", stack, s.StackStatus)
			}
		}
		if keys := objects(t, bucket); len(keys) != 0 {
			t.Errorf("objects uploaded: %v", keys)
		}
	})
}

func randHex(t *testing.T) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// tamperedCopy returns the signed archive with f.txt's content changed
// (its size kept: upper case), the rest (signature.asc too) copied as it is.
func tamperedCopy(t *testing.T, signed string) []byte {
	t.Helper()
	zr, err := zip.OpenReader(signed)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if f.Name == "f.txt" {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate})
			w.Write(bytes.ToUpper(b))
			continue
		}
		raw, _ := f.OpenRaw()
		w, _ := zw.CreateRaw(&f.FileHeader)
		io.Copy(w, raw)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkRemoteJSON checks a --json output against its schema in docs/json.
func checkRemoteJSON(t *testing.T, cmd string, code int, stdout string) {
	t.Helper()
	if err := checkJSONOutput([]string{"assemble", cmd}, code, []byte(stdout)); err != nil {
		t.Errorf("%s --json breaks its schema: %v", cmd, err)
	}
}

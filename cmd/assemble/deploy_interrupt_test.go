package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

// cancelOn is a writer that cancels when a line holding the text is
// written to it: Ctrl-C at a known step of a deploy.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	text   string
	cancel func()
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte(w.text)) {
		w.cancel()
	}
	return w.buf.Write(p)
}

// Issue 27, item 11: Ctrl-C while a stack's change set is under way names
// that droplet and what it was doing, exit 130, in text and in --json
// (whose result lists it in inFlight). The command's error used to be
// replaced by a bare "interrupted".
func TestDeployInterruptNamesInFlight(t *testing.T) {
	moto.Env(t)
	b := make([]byte, 4)
	rand.Read(b)
	u := hex.EncodeToString(b)
	dir := t.TempDir()
	app := filepath.Join(dir, "app.cloud")
	m := map[string]any{"schema": "cloud-assembly/1.0", "droplets": map[string]any{
		"Slow": map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"stackName": "slow-" + u, "template": "t.yaml"}},
		"Later": map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"stackName": "later-" + u, "template": "t.yaml"}, "dependsOn": []string{"Slow"}},
	}}
	mb, _ := json.Marshal(m)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	writeCloud(t, app, map[string]string{"manifest.json": string(mb), "t.yaml": "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n"})
	for _, asJSON := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		text := "Slow: created change set"
		if asJSON { // --json: the events are JSON lines on stderr
			text = `"droplet":"Slow","message":"created change set`
		}
		stderr := &cancelOn{text: text, cancel: cancel}
		var stdout bytes.Buffer
		args := []string{"assemble", "deploy", "--allow-unsigned", app}
		if asJSON {
			args = append(args, "--json")
		}
		code := run(ctx, args, nil, &stdout, stderr)
		cancel()
		errText := stderr.buf.String()
		if code != exitInterrupted {
			t.Fatalf("json=%v: exit %d, want 130\n%s%s", asJSON, code, stdout.String(), errText)
		}
		if !strings.Contains(errText, "assemble: error: deploy "+app+": interrupted: stopped starting new steps; in flight: Slow (created change set assemble-") ||
			!strings.Contains(errText, "not started: Later") {
			t.Errorf("json=%v: stderr does not name what was in flight:\n%s", asJSON, errText)
		}
		if !asJSON {
			continue
		}
		var out struct {
			InFlight []string `json:"inFlight"`
			Droplets []struct {
				ID, Outcome string
			} `json:"droplets"`
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("%v\n%s", err, stdout.String())
		}
		outcomes := map[string]string{}
		for _, d := range out.Droplets {
			outcomes[d.ID] = d.Outcome
		}
		if out.Error.Code != "interrupted" || !strings.Contains(out.Error.Message, "in flight: Slow") || strings.Join(out.InFlight, ",") != "Slow" ||
			outcomes["Slow"] != "interrupted" || outcomes["Later"] != "not-started" {
			t.Errorf("--json: %s", stdout.String())
		}
	}
	// The change set never executed went, with the review stack it made.
	stacks, err := cloudformation.NewFromConfig(cfg).ListStacks(context.Background(), &cloudformation.ListStacksInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stacks.StackSummaries {
		if strings.HasSuffix(aws.ToString(s.StackName), u) && s.StackStatus != cfntypes.StackStatusDeleteComplete {
			t.Errorf("stack %s left (%s)", aws.ToString(s.StackName), s.StackStatus)
		}
	}
}

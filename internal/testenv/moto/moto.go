// Package moto gives tests a moto_server (the AWS mock moto ships) on a
// loopback port, and points the AWS SDK at it the standard way:
// AWS_ENDPOINT_URL and dummy credentials in the environment.
//
// One server is started per test process, the first time a test asks for
// it, and stopped by Main when the package's tests end; tests that share it
// use names of their own (a bucket, a stack) so that they do not meet.
// ASSEMBLE_MOTO_ENDPOINT names a server that is already running instead.
// Where moto_server is not installed, the tests that need it skip, saying
// why.
//
// moto's limits that tests must know (moto 5.2.1): change sets publish no
// stack outputs or exports, so references between stacks are tested with
// CreateStack/UpdateStack; resources are recorded, not run.
package moto

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	once     sync.Once
	endpoint string
	startErr error
	cmd      *exec.Cmd
)

var runningRE = regexp.MustCompile(`Running on (http://127\.0\.0\.1:\d+)`)

func start() {
	if e := os.Getenv("ASSEMBLE_MOTO_ENDPOINT"); e != "" {
		endpoint = strings.TrimRight(e, "/")
		return
	}
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		startErr = errors.New("moto_server is not installed (moto ships in this machine image's Python; .ci/run checks for it)")
		return
	}
	c := exec.Command(bin, "-H", "127.0.0.1", "-p", "0")
	c.Env = append(os.Environ(), "PYTHONUNBUFFERED=1")
	out, err := c.StderrPipe()
	if err != nil {
		startErr = err
		return
	}
	c.Stdout = io.Discard
	if err := c.Start(); err != nil {
		startErr = fmt.Errorf("start moto_server: %w", err)
		return
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if m := runningRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			startErr = errors.New("moto_server exited before it listened")
			c.Process.Kill()
			c.Wait()
			return
		}
		endpoint, cmd = u, c
	case <-time.After(60 * time.Second):
		c.Process.Kill()
		c.Wait()
		startErr = errors.New("moto_server did not listen within 60s")
		return
	}
	// Wait until it answers.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(endpoint + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	startErr = errors.New("moto_server did not answer within 30s")
}

// Endpoint returns the moto server's URL, starting it the first time, or
// skips the test, saying why, when there is none.
func Endpoint(t testing.TB) string {
	t.Helper()
	once.Do(start)
	if startErr != nil {
		if os.Getenv("ASSEMBLE_REQUIRE_MOTO") != "" {
			t.Fatalf("moto: %v (ASSEMBLE_REQUIRE_MOTO is set)", startErr)
		}
		t.Skipf("moto: %v", startErr)
	}
	return endpoint
}

// Env starts (or finds) the server and points the AWS SDK of this process
// and of the processes it starts at it, for the test's duration: endpoint,
// dummy credentials, region us-east-1, no profile, role or config file.
func Env(t testing.TB) string {
	t.Helper()
	e := Endpoint(t)
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL":            e,
		"AWS_ACCESS_KEY_ID":           "testing",
		"AWS_SECRET_ACCESS_KEY":       "testing",
		"AWS_REGION":                  "us-east-1",
		"AWS_DEFAULT_REGION":          "us-east-1",
		"AWS_CONFIG_FILE":             os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
	// Unset, not empty: the aws CLI takes AWS_PROFILE="" for a profile
	// named "" (t.Setenv restores them after the test).
	for _, k := range []string{"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	return e
}

// Main runs the package's tests and stops the server they started; call
// it from TestMain: func TestMain(m *testing.M) { moto.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	if cmd != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
	os.Exit(code)
}

// Stop stops the server this process started, if any: for a TestMain that
// cannot call Main because another runs the tests (testscript.Main).
func Stop() {
	if cmd != nil {
		cmd.Process.Kill()
		cmd.Wait()
		cmd = nil
	}
}

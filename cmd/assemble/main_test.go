package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

// TestMain registers the assemble command so that the test binary doubles as
// the tool inside testscript scripts, with no build step. It checks every
// --json output against its schema in docs/json (runChecked).
func TestMain(m *testing.M) {
	testscript.Main(stopMoto{m}, map[string]func(){
		"assemble": func() { os.Exit(runChecked(os.Args)) },
	})
}

// TestScript runs the end-to-end scripts in testdata/script. Each script's
// $WORK holds a copy of fixtures/ as $WORK/fixtures; $SHARED points at
// ../shared when it exists (scripts that need it use [exists $SHARED]);
// $DOCS is the repository's docs folder.
// A script fails when a command's --json output broke its schema.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			if err := os.CopyFS(filepath.Join(env.WorkDir, "fixtures"), os.DirFS(filepath.Join("..", "..", "fixtures"))); err != nil {
				return err
			}
			shared, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared"))
			env.Setenv("SHARED", shared)
			env.Setenv(envJSONDocs, jsonDocsDir())
			env.Setenv("DOCS", filepath.Dir(jsonDocsDir()))
			env.Defer(func() {
				if b, err := os.ReadFile(filepath.Join(env.WorkDir, violationsFile)); err == nil {
					env.T().Fatal("--json output breaks its schema:\n" + string(b))
				}
			})
			return nil
		},
		Cmds: scriptCmds(),
		// [shared] holds when ../shared exists: [!shared] skip 'needs ../shared'.
		Condition: func(cond string) (bool, error) {
			if cond != "shared" {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			_, err := os.Stat(filepath.Join("..", "..", "..", "shared"))
			return err == nil, nil
		},
	})
}

// stopMoto runs the tests, then stops the moto_server they started.
type stopMoto struct{ m *testing.M }

func (s stopMoto) Run() int {
	code := s.m.Run()
	moto.Stop()
	return code
}

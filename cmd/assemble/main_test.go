package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain registers the assemble command so that the test binary doubles as
// the tool inside testscript scripts, with no build step.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"assemble": func() {
			os.Exit(run(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScript runs the end-to-end scripts in testdata/script. Each script's
// $WORK holds a copy of fixtures/ as $WORK/fixtures; $SHARED points at
// ../shared when it exists (scripts that need it use [exists $SHARED]).
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			if err := os.CopyFS(filepath.Join(env.WorkDir, "fixtures"), os.DirFS(filepath.Join("..", "..", "fixtures"))); err != nil {
				return err
			}
			shared, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared"))
			env.Setenv("SHARED", shared)
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

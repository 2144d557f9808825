package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/connectors"
)

// examplesDir is where the example configurations write, for users' own runs of them.
const examplesDir = "/tmp/flowstate-examples"

// intoDir returns the -D overrides that move every path of the example configuration c
// under examplesDir into dir, keeping a file:// scheme.
func intoDir(c *config.Config, dir string) []config.Override {
	var out []config.Override
	move := func(key, v string) {
		if i := strings.Index(v, examplesDir); i >= 0 {
			out = append(out, config.Override{Flag: config.FlagDynamic, Key: key, Value: v[:i] + filepath.Join(dir, strings.TrimPrefix(v[i:], examplesDir))})
		}
	}
	move(config.KeyJobOutput, c.Job.Output)
	move("execution.checkpointing.dir", c.Checkpointing.Dir)
	move("execution.checkpointing.savepoint-dir", c.Checkpointing.SavepointDir)
	for opt, v := range c.BackendOptions {
		move("state.backend."+c.StateBackend+"."+opt, v)
	}
	for opt, v := range c.StorageOptions {
		if opt != "dir" && opt != "savepoint-dir" {
			move("execution.checkpointing."+c.CheckpointStorage+"."+opt, v)
		}
	}
	return out
}

// TestExampleConfigsRun runs every configuration of examples/configs (one per row of the
// seed's Old -> New table, in old and new form) with the runner and checks each commits
// its output. The paths the examples write under /tmp/flowstate-examples are moved into
// the test's own directory with -D, so that a user's runs of the examples and the test's
// never share a directory.
func TestExampleConfigsRun(t *testing.T) {
	files, _ := filepath.Glob("../../examples/configs/*.yaml")
	if len(files) < 10 {
		t.Fatalf("found %d example configs, want 10", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			c, err := config.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			overrides := intoDir(c, t.TempDir())
			moved, err := config.LoadWith(f, overrides)
			if err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprintf("%+v", *moved); strings.Contains(s, examplesDir) {
				t.Fatalf("%s still writes under %s with %v: %s", f, examplesDir, overrides, s)
			}
			args := []string{"run", "--config", f, "--plugin-dir", testbin.PluginDir(t)}
			for _, o := range overrides {
				args = append(args, "-D", o.Key+"="+o.Value)
			}
			r := startRunner(t, args...)
			if err := r.wait(t, time.Minute); err != nil {
				t.Fatalf("%v\n%s", err, tail(r.out.String(), 20))
			}
			parts, err := connectors.CommittedFiles(moved.Job.Output)
			if err != nil || len(parts) == 0 {
				t.Fatalf("no committed output in %s (%v)\n%s", moved.Job.Output, err, tail(r.out.String(), 20))
			}
		})
	}
}

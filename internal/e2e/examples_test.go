package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/connectors"
)

// TestExampleConfigsRun runs every configuration of examples/configs (one per row of the
// seed's Old -> New table, in old and new form) with the runner and checks each commits
// its output.
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
			os.RemoveAll(c.Job.Output) // the examples write under /tmp/flowstate-examples
			r := startRunner(t, "run", "--config", f, "--plugin-dir", testbin.PluginDir(t))
			if err := r.wait(t, time.Minute); err != nil {
				t.Fatalf("%v\n%s", err, tail(r.out.String(), 20))
			}
			parts, err := connectors.CommittedFiles(c.Job.Output)
			if err != nil || len(parts) == 0 {
				t.Fatalf("no committed output in %s (%v)\n%s", c.Job.Output, err, tail(r.out.String(), 20))
			}
		})
	}
}

package e2e

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
)

// TestIncrementalCheckpointsListed runs the aggregate job on the leveldb plugin with
// incremental checkpoints and fsstorage, then checks that `runner checkpoints list --json`
// reports them incremental, adding far fewer bytes than their size, and that the job
// resumes from the latest one.
func TestIncrementalCheckpointsListed(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	write := func(records int) {
		writeConfig(t, config, map[string]any{
			"state.backend.type":                            "leveldb",
			"state.backend.leveldb.localdir":                filepath.Join(dir, "leveldb"),
			"execution.checkpointing.storage":               "filesystem",
			"execution.checkpointing.dir":                   filepath.Join(dir, "checkpoints"),
			"execution.checkpointing.incremental":           true,
			"execution.checkpointing.interval":              "200ms",
			"execution.checkpointing.num-retained":          3,
			"execution.checkpointing.data-inline-threshold": 0,
			"job.name":        "agg",
			"job.type":        "aggregate",
			"job.parallelism": 2,
			"job.keys":        100000,
			"job.records":     records,
			"job.rate":        10000,
		})
	}
	write(30000)
	run := func(args ...string) {
		t.Helper()
		r := startRunner(t, append([]string{"run", "--config", config, "--plugin-dir", testbin.PluginDir(t)}, args...)...)
		if err := r.wait(t, time.Minute); err != nil {
			t.Fatalf("runner: %v\n%s", err, r.out.String())
		}
	}
	run()
	out, err := runnerCmd(t, "checkpoints", "list", "--config", config, "--json", "--plugin-dir", testbin.PluginDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		ID          int64 `json:"id"`
		Size        int64 `json:"size"`
		Incremental bool  `json:"incremental"`
		AddedBytes  int64 `json:"added_bytes"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("checkpoints list --json printed %q: %v", out, err)
	}
	if len(list) != 3 {
		t.Fatalf("%d checkpoints listed, want the 3 retained: %s", len(list), out)
	}
	small := 0
	for _, c := range list {
		if !c.Incremental || c.Size <= 0 || c.AddedBytes < 0 || c.AddedBytes > c.Size {
			t.Fatalf("checkpoint %d: incremental %v, size %d, added %d; want an incremental checkpoint adding at most its size:\n%s", c.ID, c.Incremental, c.Size, c.AddedBytes, out)
		}
		if c.AddedBytes*4 < c.Size {
			small++
		}
		t.Logf("checkpoint %d: size %d bytes, added %d bytes (%.1f%%)", c.ID, c.Size, c.AddedBytes, 100*float64(c.AddedBytes)/float64(c.Size))
	}
	if small == 0 {
		t.Fatalf("no retained checkpoint added less than a quarter of its size:\n%s", out)
	}
	// Resume with more records: the restored chain is continued and the job finishes.
	write(40000)
	run("--from", "latest")
}

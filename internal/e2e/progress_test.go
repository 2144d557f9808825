package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/wordcheck"
)

var progressDone = regexp.MustCompile(`(restore|savepoint): done, [0-9.]+ [KMG]?i?B in [0-9.]+m?s: bytes=(\d+)`)

// TestLongOperationsShowProgress takes a savepoint of a running word count whose storage
// writes slowly, then restores a job from that savepoint: `runner savepoint` reports the
// savepoint's bytes as they are uploaded and the runner the bytes it restored, each ending
// with a line that counts them (log lines: the output is not a terminal). The byte counts
// are those of the savepoint's state, as `checkpoints inspect` reads it back.
func TestLongOperationsShowProgress(t *testing.T) {
	t.Parallel() // long and mostly waiting: it runs beside the other such tests
	dir := t.TempDir()
	input, cfg := filepath.Join(dir, "in.txt"), filepath.Join(dir, "c.yaml")
	if err := wordcheck.WriteText(input, 4<<20, 20000, 4); err != nil {
		t.Fatal(err)
	}
	conf := map[string]any{
		"state.backend.type":                            "hashmap",
		"execution.checkpointing.storage":               "faultstorage",
		"execution.checkpointing.dir":                   filepath.Join(dir, "checkpoints"),
		"execution.checkpointing.savepoint-dir":         filepath.Join(dir, "savepoints"),
		"execution.checkpointing.faultstorage.fault":    "slow",
		"execution.checkpointing.faultstorage.delay":    "600ms",
		"execution.checkpointing.interval":              "200ms",
		"execution.checkpointing.data-inline-threshold": 0,
		"job.name":        "wc",
		"job.parallelism": 2,
		"job.input":       input,
		"job.output":      filepath.Join(dir, "out"),
		"job.rate":        4000,
	}
	writeConfig(t, cfg, conf)
	plugins := faultPluginDir(t)
	r := startRunner(t, "run", "--config", cfg, "--plugin-dir", plugins)
	waitOutput(t, r, "checkpoint complete", time.Minute)
	out, err := runnerCmdErr(t, "savepoint", "--config", cfg, "--plugin-dir", plugins)
	if err != nil {
		t.Fatalf("savepoint: %v\n%s", err, out)
	}
	m := progressDone.FindStringSubmatch(out)
	if m == nil || m[1] != "savepoint" {
		t.Fatalf("runner savepoint showed no progress ending in a done line:\n%s", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	pointer := lines[len(lines)-1]
	if out, err := runnerCmd(t, "stop", "--config", cfg, "--plugin-dir", plugins); err != nil {
		t.Fatalf("stop: %v\n%s", err, out)
	}
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("runner after stop: %v\n%s", err, tail(r.out.String(), 20))
	}
	uploaded, _ := strconv.ParseInt(m[2], 10, 64)
	keyed := keyedBytes(t, pointer)
	if uploaded != keyed {
		t.Fatalf("the savepoint's progress counted %d bytes, its keyed state is %d", uploaded, keyed)
	}

	delete(conf, "execution.checkpointing.faultstorage.fault")
	delete(conf, "job.rate")
	writeConfig(t, cfg, conf)
	r = startRunner(t, "run", "--config", cfg, "--plugin-dir", plugins, "--from", pointer)
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("run --from the savepoint: %v\n%s", err, tail(r.out.String(), 20))
	}
	m = progressDone.FindStringSubmatch(r.out.String())
	if m == nil || m[1] != "restore" {
		t.Fatalf("the restore showed no progress ending in a done line:\n%s", tail(r.out.String(), 30))
	}
	if restored, _ := strconv.ParseInt(m[2], 10, 64); restored != keyed {
		t.Fatalf("the restore counted %d bytes, the savepoint's keyed state is %d", restored, keyed)
	}
}

// runnerCmdErr runs the runner binary and returns its standard output and error together.
func runnerCmdErr(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(testbin.Runner(t), args...).CombinedOutput()
	return string(out), err
}

// keyedBytes sums the sizes of the keyed state files of the checkpoint or savepoint at
// pointer (a directory with its _metadata).
func keyedBytes(t *testing.T, pointer string) int64 {
	t.Helper()
	m := readMetadata(t, pointer)
	var n int64
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, h := range st.Keyed {
				for _, f := range h.Files {
					n += f.Handle.Size
				}
			}
		}
	}
	if n == 0 {
		t.Fatalf("%s holds no keyed state", pointer)
	}
	return n
}

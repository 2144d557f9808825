package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/runtime/checkpoint"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runnerCmd runs a runner subcommand to completion and returns its standard output.
func runnerCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(testbin.Runner(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), &cmdError{err, stderr.String()}
	}
	return string(out), nil
}

type cmdError struct {
	err    error
	stderr string
}

func (e *cmdError) Error() string { return e.err.Error() + ": " + e.stderr }

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestSavepointsMoveStateBetweenBackends runs a word count on hashmap, stops it with a
// savepoint, resumes it on leveldb, stops it with a savepoint again and finishes it on
// hashmap: the output is exactly the failure-free one, so the state survived both moves.
// Neither stop makes the runner warn as it closes the job's state.
func TestSavepointsMoveStateBetweenBackends(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 3<<20, 8000, map[string]any{
		"rest.port":                             freePort(t),
		"execution.checkpointing.savepoint-dir": filepath.Join(t.TempDir(), "savepoints"),
	})
	leveldbCfg := s.variant(t, filepath.Join(s.dir, "leveldb.yaml"), map[string]any{"state.backend.type": "leveldb"})

	stopWithSavepoint := func(r *runner, cfg string) string {
		t.Helper()
		waitOutput(t, r, "checkpoint complete", time.Minute) // the job runs and has state to move
		out := retried(t, r, "stop", "--config", cfg, "--savepoint")
		if err := r.wait(t, time.Minute); err != nil {
			t.Fatalf("runner after stop: %v\n%s", err, tail(r.out.String(), 20))
		}
		if strings.Contains(r.out.String(), "runner: closing") { // a clean stop has nothing to warn about
			t.Fatalf("the runner warned as it closed after a clean stop --savepoint:\n%s", tail(r.out.String(), 20))
		}
		ptr := lastLine(out)
		checkSelfContained(t, ptr)
		return ptr
	}
	r := s.run(t)
	sp1 := stopWithSavepoint(r, s.config)
	r = startRunner(t, "run", "--config", leveldbCfg, "--plugin-dir", testbin.PluginDir(t), "--from", sp1)
	sp2 := stopWithSavepoint(r, leveldbCfg)
	if sp1 == sp2 {
		t.Fatalf("two savepoints share the pointer %s", sp1)
	}
	r = s.run(t, "--from", sp2)
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("resume on hashmap: %v\n%s", err, tail(r.out.String(), 20))
	}
	s.check(t, r.out.String())
}

// checkSelfContained asserts a savepoint references no file outside its own directory.
func checkSelfContained(t *testing.T, ptr string) {
	t.Helper()
	dir := strings.TrimPrefix(ptr, "file://")
	b, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if err != nil {
		t.Fatalf("savepoint %s: %v", ptr, err)
	}
	m, err := checkpoint.DecodeMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Savepoint {
		t.Fatalf("%s: metadata does not say savepoint", ptr)
	}
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, h := range st.Keyed {
				if h.Format != "flowstate-kv-v1" {
					t.Fatalf("%s: keyed state in format %q, not the canonical one", ptr, h.Format)
				}
				for _, f := range h.Files {
					if ref := strings.TrimPrefix(f.Handle.Ref, "file://"); ref != "" && !strings.HasPrefix(ref, dir+"/") {
						t.Fatalf("%s: references %s outside the savepoint", ptr, f.Handle.Ref)
					}
				}
			}
		}
	}
}

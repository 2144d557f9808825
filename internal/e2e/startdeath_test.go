package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testplugins"
)

// dyingPluginDir returns a plugin directory of its own holding the diebackend test plugin
// (hard links to the shared build) and fsstorage, with orders for diebackend to die at phase
// the first deaths times it gets there, and the binary's path (its death files go beside it).
func dyingPluginDir(t *testing.T, phase string, deaths int) (dir, bin string) {
	t.Helper()
	shared := faultPluginDir(t)
	dir = t.TempDir()
	testplugins.Link(t, dir, shared, "diebackend", "fsstorage")
	bin = filepath.Join(dir, testplugins.Prefix+"diebackend")
	if err := os.WriteFile(bin+".die", []byte(phase+" "+strconv.Itoa(deaths)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

// deaths counts the death files the diebackend processes of bin left.
func deaths(t *testing.T, bin string) int {
	t.Helper()
	m, err := filepath.Glob(bin + ".died-*")
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// TestPluginDyingOnItsWayUpIsOneMoreFailure: a state backend process that dies (SIGKILL)
// before its handshake, while it takes its options, or while it restores state is one more
// failure for the restart strategy, not the end of the job. Each case has the plugin die
// twice; restore is reached by a recovery, after the test kills the running backend once a
// checkpoint completed. The runner recovers from each death (it logs a failure for each),
// and the output equals the failure-free run's. With fewer restart attempts than deaths,
// the run fails with an error naming the strategy's limit.
func TestPluginDyingOnItsWayUpIsOneMoreFailure(t *testing.T) {
	t.Parallel() // mostly waits on a rate-limited job
	for _, phase := range []string{"start", "configure", "restore"} {
		t.Run(phase, func(t *testing.T) {
			dir, bin := dyingPluginDir(t, phase, 2)
			s := newWordcount(t, "diebackend", "filesystem", 1<<19, 5000, nil)
			r := startRunner(t, "run", "--config", s.config, "--plugin-dir", dir)
			failures := 2
			if phase == "restore" {
				waitOutput(t, r, "checkpoint complete", time.Minute)
				pid := pluginOf(r.cmd.Process.Pid, "diebackend")
				if pid <= 0 {
					t.Fatalf("no diebackend process of the runner:\n%s", tail(r.out.String(), 20))
				}
				syscall.Kill(pid, syscall.SIGKILL)
				failures++
			}
			if err := r.wait(t, 2*time.Minute); err != nil {
				t.Fatalf("%v\n%s", err, tail(r.out.String(), 40))
			}
			out := r.out.String()
			s.check(t, out)
			if n := deaths(t, bin); n != 2 {
				t.Fatalf("diebackend died %d times at %s, want 2:\n%s", n, phase, tail(out, 40))
			}
			// The runner starts the plugin before the job to learn what it serves.
			logged := "job failed; recovering"
			if phase == "start" {
				logged = "plugin exited during start-up; starting it again"
			}
			if n := strings.Count(out, logged); n != failures {
				t.Fatalf("the runner recovered from %d failures, want %d (the deaths at %s):\n%s", n, failures, phase, tail(out, 40))
			}
		})
	}
	for _, phase := range []string{"start", "configure"} {
		t.Run("limit/"+phase, func(t *testing.T) { dieBeyondTheLimit(t, phase) })
	}
}

// dieBeyondTheLimit has diebackend die twice at phase with one restart allowed: the run
// fails, naming the limit.
func dieBeyondTheLimit(t *testing.T, phase string) {
	dir, bin := dyingPluginDir(t, phase, 2)
	s := newWordcount(t, "diebackend", "filesystem", 1<<16, 20000, nil)
	s.edit(t, map[string]any{"restart-strategy.fixed-delay.attempts": 1})
	r := startRunner(t, "run", "--config", s.config, "--plugin-dir", dir)
	err := r.wait(t, time.Minute)
	out := r.out.String()
	if err == nil {
		t.Fatalf("the runner exited 0 though its backend died twice with one restart allowed:\n%s", tail(out, 20))
	}
	if n := deaths(t, bin); n != 2 {
		t.Fatalf("diebackend died %d times at %s, want 2:\n%s", n, phase, tail(out, 20))
	}
	if !strings.Contains(out, "restart-strategy.fixed-delay.attempts") {
		t.Fatalf("the error does not name the restart limit:\n%s", tail(out, 20))
	}
}

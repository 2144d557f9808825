package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shutdownBound is how soon a runner must end after SIGINT, SIGTERM or `runner stop`,
// whatever its plugins do.
const shutdownBound = 10 * time.Second

// frozenRunner starts a word count whose heartbeats and cancellation watchdog are too slow
// to help, waits for a first checkpoint, and freezes the state backend. It returns the
// runner and the pids of its plugin processes.
func frozenRunner(t *testing.T) (*wordcountSetup, *runner, []int) {
	t.Helper()
	s := newWordcount(t, "hashmap", "filesystem", 1<<20, 15000, map[string]any{
		"heartbeat.interval":        "10s",
		"heartbeat.timeout":         "10min",
		"task.cancellation.timeout": "10min",
		"rest.port":                 freePort(t),
	})
	r := s.run(t)
	waitOutput(t, r, "checkpoint complete", time.Minute)
	backend := pluginOf(r.cmd.Process.Pid, "hashmap")
	pids := []int{backend, pluginOf(r.cmd.Process.Pid, "fsstorage")}
	freeze(t, backend)
	return s, r, pids
}

// waitExit waits for the runner to exit and returns how long that took from start.
func waitExit(t *testing.T, r *runner, start time.Time) time.Duration {
	t.Helper()
	select {
	case <-r.done:
		return time.Since(start)
	case <-time.After(time.Minute):
		t.Fatalf("the runner still runs a minute after it was told to stop:\n%s", tail(r.out.String(), 30))
		return 0
	}
}

// TestSignalEndsRunnerWithFrozenPlugin sends SIGTERM, then SIGINT, to a runner whose state
// backend is frozen: the runner ends within 10 s, says that it killed its plugins, and
// leaves no plugin process behind.
func TestSignalEndsRunnerWithFrozenPlugin(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			_, r, pids := frozenRunner(t)
			start := time.Now()
			if err := r.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			took := waitExit(t, r, start)
			out := r.out.String()
			t.Logf("ended %s after %s: %v\n%s", took.Round(time.Millisecond), sig, r.err, tail(out, 3))
			if took > shutdownBound {
				t.Errorf("the runner took %s to end after %s, more than %s", took, sig, shutdownBound)
			}
			if r.err == nil {
				t.Errorf("the runner exited 0 after %s with its job unfinished", sig)
			}
			if !regexp.MustCompile(`killed its plugins with SIGKILL: [^\n]*hashmap \(pid ` + strconv.Itoa(pids[0]) + `\)`).MatchString(out) {
				t.Errorf("the runner does not say that it killed the frozen backend:\n%s", tail(out, 10))
			}
			waitGone(t, pids, 5*time.Second)
		})
	}
}

// TestStopEndsJobWithFrozenPlugin runs `runner stop` against a runner whose state backend
// is frozen: stop reports success only once the runner has ended (and the runner does end,
// within the bound), never a "job cancelled" for a job that still runs; no plugin process
// is left behind.
func TestStopEndsJobWithFrozenPlugin(t *testing.T) {
	s, r, pids := frozenRunner(t)
	start := time.Now()
	out, err := runnerCmd(t, "stop", "--config", s.config)
	stopped := time.Since(start)
	t.Logf("stop returned after %s: %v\n%s", stopped.Round(time.Millisecond), err, out)
	if err != nil {
		if r.exited() {
			t.Fatalf("stop failed, yet the job had ended: %v", err)
		}
		t.Fatalf("stop could not end a job with a frozen plugin: %v\n%s", err, tail(r.out.String(), 20))
	}
	if !strings.Contains(out, "job cancelled: its runner at") {
		t.Fatalf("stop succeeded without saying the job ended:\n%s", out)
	}
	// The runner closes its control endpoint as it ends: it must be on its way out.
	took := waitExit(t, r, start)
	if took > shutdownBound+2*time.Second {
		t.Errorf("the runner took %s to end after stop", took)
	}
	waitGone(t, pids, 5*time.Second)
}

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testwait"
)

// The freeze tests stop a plugin process with SIGSTOP, as a stuck machine, a debugger or
// a paging storm would: the process stays alive and answers nothing, not even go-plugin's
// Shutdown. The runner must notice (heartbeat.timeout), kill it with SIGKILL, recover
// from the latest checkpoint and finish with exact output.

// newFreezeWordcount is the word count of the freeze tests, with freezeConfig's keys. Its
// lease (job.lease.timeout 4s, valid for 3.2 s) lapses while a frozen storage plugin, which
// keeps the lease record, blocks the renewals, before the heartbeat (2-3 s plus its
// interval) kills it: the runner must hold back its commits, renew the lease through the
// restarted plugin (nobody took it over) and go on.
func newFreezeWordcount(t *testing.T, heartbeatTimeout string) *wordcountSetup {
	t.Helper()
	return newWordcount(t, "hashmap", "filesystem", 1<<20, 15000, freezeConfig(t, heartbeatTimeout))
}

// freezeConfig is the configuration every freeze test adds to the word count: quick
// heartbeats, and many tolerable failed checkpoints, so that the heartbeat, not a
// checkpoint failure, is what notices the frozen plugin.
func freezeConfig(t *testing.T, heartbeatTimeout string) map[string]any {
	return map[string]any{
		"heartbeat.interval":                                   "100ms",
		"heartbeat.timeout":                                    heartbeatTimeout,
		"execution.checkpointing.timeout":                      "1s",
		"execution.checkpointing.tolerable-failed-checkpoints": 1000,
		"rest.port": freePort(t),
	}
}

// freeze stops pid with SIGSTOP and waits until the kernel shows it stopped. A cleanup
// kills it, should the test end with it still frozen.
func freeze(t *testing.T, pid int) {
	t.Helper()
	if pid <= 0 {
		t.Fatal("no plugin process to freeze")
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %d: %v", pid, err)
	}
	testwait.For(t, fmt.Sprintf("process %d to stop", pid), 10*time.Second, func() error {
		if s := procState(pid); s != "T" {
			return fmt.Errorf("state %q", s)
		}
		return nil
	})
}

// thaw lets a frozen process go on.
func thaw(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatalf("SIGCONT %d: %v", pid, err)
	}
}

// procState returns the state letter of pid (R, S, T, Z, ...), "" when it is gone.
func procState(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// heartbeatKill is the line the runner logs when it kills plugin name, pid, for missing
// its heartbeats.
func heartbeatKill(name string, pid int) string {
	return fmt.Sprintf("plugin %s (pid %d) did not answer its heartbeats", name, pid)
}

// checkRecovered asserts that after killLine the runner restarted plugin name and
// restored the job from a checkpoint, and that the frozen process pid is gone.
func checkRecovered(t *testing.T, out, killLine, name string, pid int) {
	t.Helper()
	i := strings.Index(out, killLine)
	if i < 0 {
		t.Fatalf("the runner never killed the frozen %s (pid %d) for its heartbeats:\n%s", name, pid, tail(out, 40))
	}
	after := out[i:]
	if !strings.Contains(after, "restarting plugin: plugin="+name) {
		t.Fatalf("recovery did not start %s again:\n%s", name, tail(out, 40))
	}
	restored := regexp.MustCompile(`restoring from checkpoint: id=(\d+)`).FindStringSubmatchIndex(after)
	if restored == nil {
		t.Fatalf("recovery did not restore from a checkpoint:\n%s", tail(out, 40))
	}
	// The latest checkpoint completed before the restore, not an older one.
	id, _ := strconv.ParseInt(after[restored[2]:restored[3]], 10, 64)
	var latest int64
	for got := range completedIDs(out[:i+restored[0]]) {
		latest = max(latest, got)
	}
	if id != latest {
		t.Fatalf("recovery restored checkpoint %d, the latest completed is %d:\n%s", id, latest, tail(out, 40))
	}
	waitGone(t, []int{pid}, 10*time.Second)
}

// TestFrozenPluginIsKilledAndReplaced freezes the state backend, then the checkpoint
// storage, while the job runs (after a first checkpoint completed): the runner kills the
// frozen process once heartbeat.timeout passes without an answer, restarts the plugin,
// restores the latest checkpoint, and the output is exactly the failure-free one.
func TestFrozenPluginIsKilledAndReplaced(t *testing.T) {
	for _, victim := range []string{"hashmap", "fsstorage"} {
		t.Run(victim, func(t *testing.T) {
			s := newFreezeWordcount(t, "2s")
			r := s.run(t)
			waitOutput(t, r, "checkpoint complete", time.Minute)
			pid := pluginOf(r.cmd.Process.Pid, victim)
			freeze(t, pid)
			if err := r.wait(t, 3*time.Minute); err != nil {
				t.Fatalf("%v\n%s", err, tail(r.out.String(), 40))
			}
			out := r.out.String()
			s.check(t, out)
			checkRecovered(t, out, heartbeatKill(victim, pid), victim, pid)
		})
	}
}

// TestFrozenPluginMidCheckpoint freezes the state backend, then the checkpoint storage,
// while a checkpoint is in progress: its chk-N directory exists (the location is set up)
// and its _metadata does not. For the storage, the absence of _metadata once the process
// is stopped proves the freeze came mid-checkpoint; for the backend, that checkpoint N
// never completes (a state stream of every checkpoint is 300 ms slow, so the backend is
// still writing its snapshot). A freeze that came too late is undone at once and tried
// again at the next checkpoint. The runner must then kill the frozen process, recover and
// finish with exact output.
func TestFrozenPluginMidCheckpoint(t *testing.T) {
	for _, victim := range []string{"hashmap", "fsstorage"} {
		t.Run(victim, func(t *testing.T) {
			s := newFreezeWordcount(t, "3s")
			dir := faultPluginDir(t)
			if victim == "hashmap" {
				faultStorage(t, s, "", map[string]any{"fault": "slow", "delay": "300ms"})
			}
			r := startRunner(t, "run", "--config", s.config, "--plugin-dir", dir)
			waitOutput(t, r, "checkpoint complete", time.Minute)
			jobDir := filepath.Join(s.dir, "checkpoints", "wc")
			var pid int
			var id int64
			for attempt := 1; ; attempt++ {
				if attempt > 50 {
					t.Fatalf("no checkpoint caught in progress in 50 tries:\n%s", tail(r.out.String(), 40))
				}
				id = waitCheckpointStarted(t, r, jobDir, id+1)
				pid = pluginOf(r.cmd.Process.Pid, victim)
				freeze(t, pid)
				if midCheckpoint(t, r, jobDir, id, victim) {
					t.Logf("froze %s (pid %d) during checkpoint %d (try %d)", victim, pid, id, attempt)
					break
				}
				thaw(t, pid)
			}
			if err := r.wait(t, 3*time.Minute); err != nil {
				t.Fatalf("%v\n%s", err, tail(r.out.String(), 40))
			}
			out := r.out.String()
			s.check(t, out)
			checkRecovered(t, out, heartbeatKill(victim, pid), victim, pid)
			if completedIDs(out)[id] {
				t.Fatalf("checkpoint %d, frozen in progress, completed", id)
			}
			checkNoHalfCheckpoints(t, jobDir)
		})
	}
}

// waitCheckpointStarted waits for the directory of a checkpoint numbered from on to appear
// without _metadata, and returns its number.
func waitCheckpointStarted(t *testing.T, r *runner, jobDir string, from int64) int64 {
	t.Helper()
	var started int64
	waitFor(t, r, fmt.Sprintf("a checkpoint from %d on in progress in %s", from, jobDir), time.Minute, func(string) error {
		entries, err := os.ReadDir(jobDir)
		for _, e := range entries {
			n, ok := strings.CutPrefix(e.Name(), "chk-")
			id, err := strconv.ParseInt(n, 10, 64)
			if !ok || err != nil || id < from {
				continue
			}
			if _, err := os.Stat(filepath.Join(jobDir, e.Name(), "_metadata")); os.IsNotExist(err) {
				started = id
				return nil
			}
		}
		return fmt.Errorf("none in %d entries (%v)", len(entries), err)
	})
	return started
}

// midCheckpoint reports whether checkpoint id was still in progress when the plugin
// victim was frozen. A frozen storage publishes nothing, so a missing _metadata proves
// it. A frozen backend holds up the checkpoint only if it had not finished its part: the
// checkpoint then expires (or the heartbeat kills the backend) before it completes.
func midCheckpoint(t *testing.T, r *runner, jobDir string, id int64, victim string) bool {
	t.Helper()
	meta := filepath.Join(jobDir, fmt.Sprintf("chk-%d", id), "_metadata")
	if victim != "hashmap" {
		_, err := os.Stat(meta)
		return os.IsNotExist(err)
	}
	complete := fmt.Sprintf("checkpoint complete: id=%d ", id)
	expired := fmt.Sprintf("checkpoint %d expired", id)
	var mid bool
	waitFor(t, r, fmt.Sprintf("checkpoint %d to complete or expire", id), time.Minute, func(out string) error {
		switch {
		case strings.Contains(out, complete):
			mid = false
		case strings.Contains(out, expired), strings.Contains(out, "did not answer its heartbeats"):
			mid = true
		default:
			return errors.New("neither")
		}
		return nil
	})
	return mid
}

// completedIDs returns the ids of the checkpoints the runner reported complete.
func completedIDs(out string) map[int64]bool {
	ids := map[int64]bool{}
	for _, m := range completedLine.FindAllStringSubmatch(out, -1) {
		id, _ := strconv.ParseInt(m[1], 10, 64)
		ids[id] = true
	}
	return ids
}

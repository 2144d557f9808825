package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
)

// faultStorage turns a word count configuration into one whose checkpoint storage is the
// faultstorage test plugin with the given options; with a timeout, it sets that checkpoint
// timeout and tolerates many failed checkpoints.
func faultStorage(t *testing.T, s *wordcountSetup, timeout string, opts map[string]any) {
	t.Helper()
	s.edit(t, map[string]any{"execution.checkpointing.storage": "faultstorage"})
	keys := map[string]any{}
	if timeout != "" {
		keys["execution.checkpointing.timeout"] = timeout
		keys["execution.checkpointing.tolerable-failed-checkpoints"] = 1000
	}
	for k, v := range opts {
		keys["execution.checkpointing.faultstorage."+k] = v
	}
	s.add(t, keys)
}

// runWith runs the word count with the plugins of dir to the end and checks its output.
func (s *wordcountSetup) runWith(t *testing.T, dir string, within time.Duration) string {
	t.Helper()
	r := startRunner(t, "run", "--config", s.config, "--plugin-dir", dir)
	if err := r.wait(t, within); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 40))
	}
	out := r.out.String()
	s.check(t, out)
	return out
}

var completedLine = regexp.MustCompile(`checkpoint complete: id=(\d+)`)

// checkNoHalfCheckpoints asserts that every chk-N directory left in the job's checkpoint
// directory has whole, decodable metadata whose state reads back intact: a checkpoint
// that failed never became resolvable.
func checkNoHalfCheckpoints(t *testing.T, jobDir string) {
	t.Helper()
	entries, err := os.ReadDir(jobDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "chk-") {
			continue
		}
		n++
		meta := filepath.Join(jobDir, e.Name(), "_metadata")
		b, err := os.ReadFile(meta)
		if err != nil {
			t.Fatalf("%s left without whole metadata: %v", e.Name(), err)
		}
		if _, err := checkpoint.DecodeMetadata(b); err != nil {
			t.Fatalf("%s: %v", meta, err)
		}
		temps, _ := filepath.Glob(filepath.Join(jobDir, e.Name(), "_metadata.inprogress-*"))
		if len(temps) > 0 {
			t.Fatalf("temporary metadata left behind: %v", temps)
		}
	}
	if n == 0 {
		t.Fatalf("no checkpoint retained in %s", jobDir)
	}
}

// TestHangingStorageExpiresCheckpoints uses a storage that hangs (ignoring its context,
// for longer than execution.checkpointing.timeout) in every third checkpoint, first while
// closing state streams, then while publishing the metadata: those checkpoints expire with
// a message naming the timeout, the job keeps running, the others complete, and the output
// is exactly the failure-free one.
func TestHangingStorageExpiresCheckpoints(t *testing.T) {
	for _, at := range []string{"state", "metadata"} {
		t.Run(at, func(t *testing.T) {
			s := newWordcount(t, "hashmap", "filesystem", 2<<20, 15000, nil)
			faultStorage(t, s, "400ms", map[string]any{"fault": "hang", "delay": "1500ms", "every": 3, "at": at})
			out := s.runWith(t, faultPluginDir(t), 2*time.Minute)
			line := regexp.MustCompile(`checkpoint failed: error="checkpoint \d+ expired after 400ms \(execution.checkpointing.timeout\)[^\n]*`).FindString(out)
			if line == "" {
				t.Fatalf("no checkpoint expired:\n%s", tail(out, 30))
			}
			t.Logf("expired: %s", line)
			if !strings.Contains(out, "injected storage delay") {
				t.Fatalf("the storage never hung:\n%s", tail(out, 30))
			}
			if m := completedLine.FindAllString(out, -1); len(m) < 2 {
				t.Fatalf("%d checkpoints completed around the hanging ones:\n%s", len(m), tail(out, 30))
			}
			checkNoHalfCheckpoints(t, filepath.Join(s.dir, "checkpoints", "wc"))
		})
	}
}

// TestSlowStorageCompletes delays every state stream of every checkpoint by 150ms, well
// under the timeout: checkpoints complete late but complete, and the output is exact.
func TestSlowStorageCompletes(t *testing.T) {
	s := newWordcount(t, "leveldb", "filesystem", 1<<20, 20000, nil)
	faultStorage(t, s, "10s", map[string]any{"fault": "slow", "delay": "150ms"})
	out := s.runWith(t, faultPluginDir(t), 2*time.Minute)
	if strings.Contains(out, "checkpoint failed") {
		t.Fatalf("a slow storage failed a checkpoint:\n%s", tail(out, 30))
	}
	if m := completedLine.FindAllString(out, -1); len(m) < 2 {
		t.Fatalf("%d checkpoints completed:\n%s", len(m), tail(out, 30))
	}
	checkNoHalfCheckpoints(t, filepath.Join(s.dir, "checkpoints", "wc"))
}

// TestCheckpointDirOutOfSpace puts the checkpoint directory on a real 4 MiB tmpfs (when
// it can mount one, as root; otherwise, or with FLOWSTATE_TEST_NO_TMPFS set, faultstorage
// fails the writes of every second checkpoint with ENOSPC) and fills it while the job runs: checkpoints are declined with "no space
// left on device", the job keeps running, and once space is back checkpoints complete
// again and the output is exact; no failed checkpoint is left resolvable.
func TestCheckpointDirOutOfSpace(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 20000, map[string]any{"execution.checkpointing.data-inline-threshold": 0})
	ckdir := filepath.Join(s.dir, "checkpoints")
	os.Mkdir(ckdir, 0o755)
	if err := mountTmpfs(ckdir, "4m"); err != nil {
		t.Logf("no tmpfs (%v): injecting ENOSPC with faultstorage instead", err)
		faultStorage(t, s, "10s", map[string]any{"fault": "enospc", "every": 2})
		out := s.runWith(t, faultPluginDir(t), 2*time.Minute)
		checkDeclinedForSpace(t, out)
		checkNoHalfCheckpoints(t, filepath.Join(ckdir, "wc"))
		return
	}
	t.Cleanup(func() { exec.Command("umount", "-l", ckdir).Run() })
	s.add(t, map[string]any{"execution.checkpointing.tolerable-failed-checkpoints": 1000})
	r := s.run(t)
	waitOutput(t, r, "checkpoint complete", 30*time.Second)
	filler := filepath.Join(ckdir, "filler")
	fill(t, filler)
	declined := regexp.MustCompile(`checkpoint failed: [^\n]*no space left on device`)
	waitMatches(t, r, declined, 1, 30*time.Second)
	waitMatches(t, r, declined, r.count(declined)+2, 30*time.Second) // a few more declined checkpoints
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 40))
	}
	out := r.out.String()
	s.check(t, out)
	checkDeclinedForSpace(t, out)
	i := strings.LastIndex(out, "no space left on device")
	if !strings.Contains(out[i:], "checkpoint complete") {
		t.Fatalf("no checkpoint completed once space was back:\n%s", tail(out, 30))
	}
	checkNoHalfCheckpoints(t, filepath.Join(ckdir, "wc"))
}

// mountTmpfs mounts a tmpfs of size at dir; it needs root (CAP_SYS_ADMIN).
func mountTmpfs(dir, size string) error {
	if os.Getenv("FLOWSTATE_TEST_NO_TMPFS") != "" {
		return errors.New("FLOWSTATE_TEST_NO_TMPFS is set")
	}
	if os.Geteuid() != 0 {
		return errors.New("not root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("mount a tmpfs at %s: %w: %s", dir, err, out)
	}
	return nil
}

func checkDeclinedForSpace(t *testing.T, out string) {
	t.Helper()
	line := regexp.MustCompile(`checkpoint failed: error="checkpoint \d+[^\n]*no space left on device[^\n]*`).FindString(out)
	if line == "" {
		t.Fatalf("no checkpoint declined for lack of space:\n%s", tail(out, 30))
	}
	t.Logf("declined: %s", line)
}

// fill writes to path until the file system is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", path, err)
			}
			return
		}
	}
}

// TestDeadlockedBackendIsReplaced: the state backend plugin deadlocks mid-job, at its first
// write after a checkpoint completed (its process stays alive, answers heartbeats, answers
// no call any more and ignores cancellation). The checkpoint expires, the
// attempt fails, its teardown waits on the plugin until task.cancellation.timeout, the
// runner kills the plugin, and recovery starts a fresh one and restores: the output is
// exactly the failure-free one, and no deadlocked process is left behind.
func TestDeadlockedBackendIsReplaced(t *testing.T) {
	s := newWordcount(t, "hangbackend", "filesystem", 1<<20, 20000, nil)
	marker := filepath.Join(s.dir, "deadlocked")
	s.add(t, map[string]any{
		"execution.checkpointing.timeout":                      "1s",
		"execution.checkpointing.tolerable-failed-checkpoints": 0,
		"task.cancellation.timeout":                            "2s",
		"state.backend.hangbackend.hang-after-checkpoint":      1,
		"state.backend.hangbackend.hang-marker":                marker,
	})
	start := time.Now()
	out := s.runWith(t, faultPluginDir(t), 2*time.Minute)
	if !strings.Contains(out, "injected backend deadlock") {
		t.Fatalf("the backend never deadlocked:\n%s", tail(out, 30))
	}
	kill := regexp.MustCompile(`[^\n]*task.cancellation.timeout\): killing the plugin that holds it up: plugin=hangbackend[^\n]*`).FindString(out)
	if kill == "" {
		t.Fatalf("the deadlocked plugin was not killed:\n%s", tail(out, 30))
	}
	t.Log(kill)
	after := out[strings.Index(out, kill):]
	if !strings.Contains(after, "restarting plugin: plugin=hangbackend") {
		t.Fatalf("recovery did not start the killed plugin again:\n%s", tail(out, 30))
	}
	if !regexp.MustCompile(`restoring from checkpoint: id=\d+`).MatchString(after) {
		t.Fatalf("recovery did not restore the latest checkpoint:\n%s", tail(out, 30))
	}
	t.Logf("recovered and finished in %s", time.Since(start).Round(time.Millisecond))
	var pids []int
	for _, p := range processes("flowstate-plugin-hangbackend") {
		pids = append(pids, p.pid)
	}
	waitGone(t, pids, 5*time.Second)
}

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
)

// checkpointsAfterKill runs a word count whose state all goes to files, kills the runner
// once three checkpoints completed, and returns the setup and the retained checkpoint
// directories, oldest first.
func checkpointsAfterKill(t *testing.T) (*wordcountSetup, []string) {
	t.Helper()
	s := newWordcount(t, "hashmap", "filesystem", 3<<20, 20000, map[string]any{"execution.checkpointing.data-inline-threshold": 0})
	s.edit(t, map[string]any{"execution.checkpointing.num-retained": 3, "restart-strategy.fixed-delay.attempts": 1})
	r := s.run(t)
	waitMatches(t, r, completedLine, 3, 30*time.Second)
	plugins := []int{pluginOf(r.cmd.Process.Pid, "hashmap"), pluginOf(r.cmd.Process.Pid, "fsstorage")}
	r.cmd.Process.Kill()
	<-r.done
	waitGone(t, plugins, 5*time.Second)
	s.waitLeasesExpired(t)
	// Completed checkpoints only: the one in progress at the kill has no _metadata.
	metas, _ := filepath.Glob(filepath.Join(s.dir, "checkpoints", "wc", "chk-*", "_metadata"))
	var dirs []string
	for _, m := range metas {
		dirs = append(dirs, filepath.Dir(m))
	}
	sort.Slice(dirs, func(i, j int) bool { return chkID(dirs[i]) < chkID(dirs[j]) })
	if len(dirs) < 2 {
		t.Fatalf("retained checkpoints %v: want at least 2", dirs)
	}
	return s, dirs
}

func chkID(dir string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "chk-"))
	return n
}

// stateFile returns a state file of checkpoint directory dir.
func stateFile(t *testing.T, dir string) string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "_") {
			return filepath.Join(dir, e.Name())
		}
	}
	t.Fatalf("no state file in %s", dir)
	return ""
}

func truncate(t *testing.T, path string, to func(size int64) int64) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, to(fi.Size())); err != nil {
		t.Fatal(err)
	}
}

func flipByte(t *testing.T, path string, at func(size int) int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[at(len(b))] ^= 0x04
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestFromLatestSkipsDamagedCheckpoints damages the newest checkpoint of a killed run four
// ways: a bit flipped in its _metadata, its _metadata truncated, a bit flipped in one of
// its state files, a state file truncated. Each time `--from latest` warns naming the
// damaged checkpoint, restores the previous one and the job finishes, and `checkpoints
// inspect latest` reports that previous one, saying it skipped the damaged one; and `--from` the
// damaged checkpoint itself fails with an error naming what is wrong, never restoring it.
func TestFromLatestSkipsDamagedCheckpoints(t *testing.T) {
	t.Parallel() // long and mostly waiting: it runs beside the other such tests
	damage := map[string]func(t *testing.T, dir string){
		"metadata-bit-flip": func(t *testing.T, dir string) {
			flipByte(t, filepath.Join(dir, "_metadata"), func(n int) int { return n / 2 })
		},
		"metadata-truncated": func(t *testing.T, dir string) {
			truncate(t, filepath.Join(dir, "_metadata"), func(n int64) int64 { return n - 5 })
		},
		"state-bit-flip": func(t *testing.T, dir string) {
			flipByte(t, stateFile(t, dir), func(n int) int { return n - 1 })
		},
		"state-truncated": func(t *testing.T, dir string) {
			truncate(t, stateFile(t, dir), func(n int64) int64 { return n / 2 })
		},
	}
	wantError := map[string]*regexp.Regexp{
		"metadata-bit-flip":  regexp.MustCompile(`checkpoint metadata: checksum mismatch`),
		"metadata-truncated": regexp.MustCompile(`checkpoint metadata: (body is|truncated)`),
		"state-bit-flip":     regexp.MustCompile(`state file://\S+: checksum [0-9a-f]{8}, its handle records`),
		"state-truncated":    regexp.MustCompile(`state file://\S+: \d+ bytes, its handle records \d+ \(truncated\?\)`),
	}
	for _, name := range []string{"metadata-bit-flip", "metadata-truncated", "state-bit-flip", "state-truncated"} {
		t.Run(name, func(t *testing.T) {
			s, dirs := checkpointsAfterKill(t)
			bad, prev := dirs[len(dirs)-1], dirs[len(dirs)-2]
			damage[name](t, bad)

			r := s.run(t, "--from", bad)
			if err := r.wait(t, time.Minute); err == nil {
				t.Fatalf("--from a damaged checkpoint succeeded:\n%s", tail(r.out.String(), 20))
			}
			if out := r.out.String(); !wantError[name].MatchString(out) || !strings.Contains(out, filepath.Base(bad)) {
				t.Fatalf("--from %s: error does not match %q and name the checkpoint:\n%s", bad, wantError[name], tail(out, 20))
			}

			// The offline commands resolve latest as the run does: past the damaged one,
			// saying so.
			cmd := exec.Command(testbin.Runner(t), "checkpoints", "inspect", "latest", "--json", "--config", s.config, "--plugin-dir", testbin.PluginDir(t))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdout, err := cmd.Output()
			var rep struct {
				Pointer      string `json:"pointer"`
				CheckpointID int    `json:"checkpoint_id"`
			}
			if err != nil || json.Unmarshal(stdout, &rep) != nil || rep.CheckpointID != chkID(prev) {
				t.Fatalf("inspect latest: %v, %+v; want checkpoint %d:\n%s\n%s", err, rep, chkID(prev), stdout, stderr.String())
			}
			if w := regexp.MustCompile(`skipping a damaged checkpoint; trying the previous one: pointer=(\S+) error="([^\n]*)"`).FindStringSubmatch(stderr.String()); w == nil || w[1] != bad || !wantError[name].MatchString(w[2]) {
				t.Fatalf("inspect latest does not say it skipped %s and why:\n%s", bad, stderr.String())
			}

			r = s.run(t, "--from", "latest")
			if err := r.wait(t, 2*time.Minute); err != nil {
				t.Fatalf("--from latest: %v\n%s", err, tail(r.out.String(), 30))
			}
			out := r.out.String()
			warn := regexp.MustCompile(`skipping a damaged checkpoint; trying the previous one: pointer=(\S+) error="([^\n]*)"`).FindStringSubmatch(out)
			if warn == nil || warn[1] != bad || !wantError[name].MatchString(warn[2]) {
				t.Fatalf("no warning naming %s and what is wrong with it:\n%s", bad, tail(out, 30))
			}
			restored := regexp.MustCompile(`restoring from the latest checkpoint: id=(\d+)`).FindStringSubmatch(out)
			if restored == nil || restored[1] != strconv.Itoa(chkID(prev)) {
				t.Fatalf("restored %v, want the previous checkpoint %s:\n%s", restored, prev, tail(out, 30))
			}
			t.Logf("skipped %s (%s), restored %s", filepath.Base(bad), warn[2], filepath.Base(prev))
		})
	}
}

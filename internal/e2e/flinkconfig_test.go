package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
)

// chkDirs lists the chk-N directories of a job's checkpoint directory.
func chkDirs(t *testing.T, jobDir string) []string {
	t.Helper()
	entries, err := os.ReadDir(jobDir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "chk-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestOverridesOnTheCommandLine runs a word count with -D and -p as Flink's CLI takes
// them: they win over the file (job name, parallelism; -p applies after every -D), the run
// logs them, and the output is exact. A bad -D value, an unknown key, a -D that turns on an
// unsupported Flink feature and a plugin option the plugin refuses fail with errors that
// say they came from -D.
func TestOverridesOnTheCommandLine(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 512<<10, 0, nil)
	r := s.run(t, "-D", "job.name=dyn", "-Dexecution.checkpointing.num-retained=1", "-p", "3")
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 30))
	}
	out := r.out.String()
	s.check(t, out)
	for _, want := range []string{`job "dyn" (wordcount, parallelism 3)`, "configuration override: -D job.name=dyn",
		"configuration override: -D execution.checkpointing.num-retained=1", "configuration override: -p 3"} {
		if !strings.Contains(out, want) {
			t.Fatalf("want %q in the run's output:\n%s", want, tail(out, 30))
		}
	}
	if n := len(chkDirs(t, filepath.Join(s.dir, "checkpoints", "dyn"))); n != 1 {
		t.Fatalf("%d checkpoints of job dyn retained, want 1 (-D num-retained)", n)
	}
	for arg, want := range map[string]string{
		"execution.checkpointing.interval=soon":           `-D execution.checkpointing.interval: bad value "soon"`,
		"execution.checkpointing.unaligned.enabled=true":  "-D execution.checkpointing.unaligned.enabled: not supported",
		"execution.checkpointing.bogus=1":                 "-D execution.checkpointing.bogus: unknown key",
		"execution.checkpointing.fsstorage.bogus-option=": "-D execution.checkpointing.fsstorage.bogus-option: plugin fsstorage refused option",
		"runner.memory.limit=100tb":                       "-D runner.memory.limit: a memory limit of 104857600 MiB exceeds the memory this process may still take",
	} {
		r := s.run(t, "-D", arg)
		if err := r.wait(t, time.Minute); err == nil {
			t.Fatalf("-D %s: the run succeeded", arg)
		}
		if !strings.Contains(r.out.String(), want) {
			t.Fatalf("-D %s: want %q in:\n%s", arg, want, tail(r.out.String(), 10))
		}
	}
	js, err := runnerCmd(t, "config", "explain", "--config", s.config, "--json", "--plugin-dir", testbin.PluginDir(t),
		"-D", "execution.checkpointing.min-pause=2s", "-p", "5", "-D", "s3.secret-key=hunter2")
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		Parallelism int      `json:"parallelism"`
		MinPause    string   `json:"min_pause"`
		Overrides   []string `json:"overrides"`
	}
	if err := json.Unmarshal([]byte(js), &e); err != nil {
		t.Fatalf("explain --json: %v\n%s", err, js)
	}
	if e.Parallelism != 5 || e.MinPause != "2s" || strings.Join(e.Overrides, "|") != "-D execution.checkpointing.min-pause=2s|-D s3.secret-key=******|-p 5" {
		t.Fatalf("explain with overrides: %+v", e)
	}
}

// TestStopWithoutSavepointFollowsRetention stops a running word count with runner stop
// (no savepoint): with Flink's default retention the job's checkpoints are deleted, with
// RETAIN_ON_CANCELLATION (set with -D) they stay and --from latest resumes the job.
func TestStopWithoutSavepointFollowsRetention(t *testing.T) {
	for _, retain := range []bool{false, true} {
		t.Run("retain="+strconv.FormatBool(retain), func(t *testing.T) {
			s := newWordcount(t, "hashmap", "filesystem", 2<<20, 6000, map[string]any{"rest.port": freePort(t)})
			var args []string
			if retain {
				args = []string{"-D", "execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION"}
			}
			r := s.run(t, args...)
			waitOutput(t, r, "control endpoint listening", 30*time.Second)
			waitOutput(t, r, "checkpoint complete", 30*time.Second)
			if out, err := runnerCmd(t, "stop", "--config", s.config); err != nil {
				t.Fatalf("stop: %v\n%s", err, out)
			}
			if err := r.wait(t, time.Minute); err != nil {
				t.Fatalf("runner after stop: %v\n%s", err, tail(r.out.String(), 20))
			}
			if !strings.Contains(r.out.String(), "job cancelled") {
				t.Fatalf("the job was not cancelled:\n%s", tail(r.out.String(), 20))
			}
			jobDir := filepath.Join(s.dir, "checkpoints", "wc")
			left := chkDirs(t, jobDir)
			if !retain {
				if len(left) != 0 {
					t.Fatalf("checkpoints %v left after stop with Flink's default retention", left)
				}
				return
			}
			if len(left) == 0 {
				t.Fatal("RETAIN_ON_CANCELLATION: no checkpoint left after stop")
			}
			r = s.run(t, "--from", "latest")
			if err := r.wait(t, 2*time.Minute); err != nil {
				t.Fatalf("--from latest after stop: %v\n%s", err, tail(r.out.String(), 20))
			}
			s.check(t, r.out.String())
		})
	}
}

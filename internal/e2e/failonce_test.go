package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// failOnceWithin bounds how long a run whose mistake no restart can fix may take to fail.
// It is generous for a busy machine and far below what the default restart strategy takes
// to give up, which it never does: exponential-delay without a limit, 1 s, 1.5 s, 2.3 s, ...
const failOnceWithin = 20 * time.Second

// restartLine is what the runner logs before each restart (Executor.backOff).
const restartLine = "job failed; recovering"

// withDefaultRestarts removes the restart strategy the word count's configuration sets, so
// that the runner uses its default with checkpointing on, and checks that the
// configuration says so.
func withDefaultRestarts(t *testing.T, s *wordcountSetup) {
	t.Helper()
	s.edit(t, map[string]any{"restart-strategy.fixed-delay.attempts": nil, "restart-strategy.fixed-delay.delay": nil})
	out, err := runnerCmd(t, "config", "explain", "--config", s.config, "--json", "--plugin-dir", testbin.PluginDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		RestartStrategy string `json:"restart_strategy"`
	}
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("config explain --json printed %q: %v", out, err)
	}
	if e.RestartStrategy != "exponential-delay" || s.conf["execution.checkpointing.interval"] == nil {
		t.Fatalf("restart strategy %q, checkpoint interval %v: want the default exponential-delay with checkpointing on", e.RestartStrategy, s.conf["execution.checkpointing.interval"])
	}
}

// failsOnce waits for r to exit and checks that it failed within failOnceWithin, without a
// restart, with output that names each of wants. It returns the output.
func failsOnce(t *testing.T, r *runner, wants ...string) string {
	t.Helper()
	start := time.Now()
	select {
	case <-r.done:
	case <-time.After(failOnceWithin):
		t.Fatalf("the runner still ran %s after it started (retrying?):\n%s", failOnceWithin, tail(r.out.String(), 20))
	}
	out := r.out.String()
	if r.err == nil {
		t.Fatalf("the runner exited 0:\n%s", tail(out, 20))
	}
	if strings.Contains(out, restartLine) {
		t.Fatalf("the runner restarted the job before it failed:\n%s", tail(out, 20))
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Fatalf("the error does not name %q:\n%s", want, tail(out, 10))
		}
	}
	t.Logf("failed once after %s: %s", time.Since(start).Round(time.Millisecond), lastLine(out))
	return out
}

// TestBadJobNameFailsOnce: a job.name that cannot be a directory name in the checkpoint
// storage is refused at load, naming the key, whatever the restart strategy.
func TestBadJobNameFailsOnce(t *testing.T) {
	for name, value := range map[string]string{"slash": "a/b", "dotdot": "..", "300-characters": strings.Repeat("n", 300)} {
		t.Run(name, func(t *testing.T) {
			s := newWordcount(t, "hashmap", "filesystem", 64<<10, 0, nil)
			withDefaultRestarts(t, s)
			failsOnce(t, s.run(t, "-D", "job.name="+value), `-D job.name: bad value "`+value+`"`)
		})
	}
}

// TestFromLatestWithoutCheckpointFailsOnce: --from latest with no completed checkpoint of
// the job fails at once, naming the pointer and the storage: in a new checkpoint
// directory; after a finished run on jmstorage without a directory (what `make run` does),
// whose checkpoints died with the runner; when every checkpoint is damaged; and after
// `runner stop`, whose retention deleted them.
func TestFromLatestWithoutCheckpointFailsOnce(t *testing.T) {
	t.Run("none-yet", func(t *testing.T) {
		s := newWordcount(t, "hashmap", "filesystem", 64<<10, 0, nil)
		withDefaultRestarts(t, s)
		failsOnce(t, s.run(t, "--from", "latest"), "--from latest: no intact completed checkpoint", filepath.Join(s.dir, "checkpoints"))
	})
	t.Run("after-a-finished-run-on-jmstorage", func(t *testing.T) {
		s := newWordcount(t, "hashmap", "jobmanager", 64<<10, 0, nil)
		s.edit(t, map[string]any{"execution.checkpointing.dir": nil})
		withDefaultRestarts(t, s)
		r := s.run(t)
		if err := r.wait(t, time.Minute); err != nil || !strings.Contains(r.out.String(), "last checkpoint:") {
			t.Fatalf("the first run did not finish with a checkpoint: %v\n%s", err, tail(r.out.String(), 20))
		}
		failsOnce(t, s.run(t, "--from", "latest"), "--from latest: no intact completed checkpoint in checkpoint storage jmstorage",
			"execution.checkpointing.dir is not set")
	})
	t.Run("every-one-damaged", func(t *testing.T) {
		s := newWordcount(t, "hashmap", "filesystem", 256<<10, 0, nil)
		withDefaultRestarts(t, s)
		r := s.run(t)
		if err := r.wait(t, time.Minute); err != nil {
			t.Fatalf("%v\n%s", err, tail(r.out.String(), 20))
		}
		chks, _ := filepath.Glob(filepath.Join(s.dir, "checkpoints", "wc", "chk-*"))
		if len(chks) == 0 {
			t.Fatal("the finished run left no checkpoint")
		}
		for _, chk := range chks {
			if err := os.Truncate(filepath.Join(chk, "_metadata"), 10); err != nil {
				t.Fatal(err)
			}
		}
		failsOnce(t, s.run(t, "--from", "latest"), append([]string{"--from latest: no intact completed checkpoint (damaged: "}, chks...)...)
	})
	t.Run("after-stop", func(t *testing.T) {
		s := newWordcount(t, "hashmap", "filesystem", 1<<20, 2000, nil)
		withDefaultRestarts(t, s)
		r := s.run(t)
		waitOutput(t, r, "checkpoint complete", time.Minute)
		if out, err := runnerCmd(t, "stop", "--config", s.config); err != nil {
			t.Fatalf("stop: %v\n%s", err, out)
		}
		waitExit(t, r, time.Now())
		if chks, _ := filepath.Glob(filepath.Join(s.dir, "checkpoints", "wc", "chk-*")); len(chks) > 0 {
			t.Fatalf("stop left checkpoints %v: the case is one whose retention deleted them", chks)
		}
		failsOnce(t, s.run(t, "--from", "latest"), "--from latest: no intact completed checkpoint", "runner stop",
			"execution.checkpointing.externalized-checkpoint-retention")
	})
}

// TestMissingPendingFileFailsOnce: a checkpoint whose file sink transaction (the pending
// file, or the part file it was committed to) is gone cannot be restored by any restart:
// --from latest fails at once naming the missing file and the checkpoint.
func TestMissingPendingFileFailsOnce(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 1<<20, 2000, nil)
	withDefaultRestarts(t, s)
	r := s.run(t)
	waitOutput(t, r, "checkpoint complete", time.Minute)
	r.cmd.Process.Signal(syscall.SIGINT) // suspends the job: its checkpoints stay
	waitExit(t, r, time.Now())
	pointer := latestPointer(t, s)
	missing := sinkTransactions(t, pointer)
	if len(missing) == 0 {
		t.Fatalf("checkpoint %s holds no file sink transaction", pointer)
	}
	var wants []string
	for _, name := range missing {
		pending := filepath.Join(s.output, "."+name+".pending")
		for _, f := range []string{pending, filepath.Join(s.output, name)} {
			if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		wants = append(wants, pending)
	}
	out := failsOnce(t, s.run(t, "--from", "latest"), pointer, "is missing")
	named := false
	for _, w := range wants {
		named = named || strings.Contains(out, w)
	}
	if !named {
		t.Fatalf("the error names none of the missing files %v:\n%s", wants, tail(out, 5))
	}
}

// latestPointer returns the pointer of the newest checkpoint `checkpoints list` shows.
func latestPointer(t *testing.T, s *wordcountSetup) string {
	t.Helper()
	out, err := runnerCmd(t, "checkpoints", "list", "--config", s.config, "--json", "--plugin-dir", testbin.PluginDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		Pointer string `json:"pointer"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) == 0 {
		t.Fatalf("checkpoints list --json printed %q (%v): want a checkpoint", out, err)
	}
	return list[len(list)-1].Pointer
}

// sinkTransactions returns the names of the part files whose transactions the file sink's
// state in the checkpoint at pointer holds.
func sinkTransactions(t *testing.T, pointer string) []string {
	t.Helper()
	var names []string
	for _, op := range readMetadata(t, pointer).Operators {
		if op.ID != dataflow.SinkID {
			continue
		}
		for _, st := range op.Subtasks {
			var state struct {
				Pending []struct {
					Name string `json:"name"`
				} `json:"pending"`
			}
			if err := json.Unmarshal(st.Operator, &state); err != nil {
				t.Fatalf("sink state %q: %v", st.Operator, err)
			}
			for _, p := range state.Pending {
				names = append(names, p.Name)
			}
		}
	}
	return names
}

// readMetadata decodes the _metadata of the checkpoint or savepoint directory pointer.
func readMetadata(t *testing.T, pointer string) *checkpoint.Metadata {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pointer, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := checkpoint.DecodeMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// finishedWordcount runs a small word count on backend with the default restart strategy
// (and extra keys) to its end, and returns it and the pointer of its latest checkpoint.
func finishedWordcount(t *testing.T, backend string, extra map[string]any) (*wordcountSetup, string) {
	t.Helper()
	s := newWordcount(t, backend, "filesystem", 256<<10, 0, extra)
	withDefaultRestarts(t, s)
	r := s.run(t)
	if err := r.wait(t, time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 20))
	}
	return s, latestPointer(t, s)
}

// TestSharedCheckpointDirFailsOnce: a job restoring --from latest in a checkpoint directory
// where an earlier job of the same name left its checkpoints fails at once, naming that
// checkpoint (and so the directory): another job type, and another state backend whose
// snapshots the job's cannot read (leveldb's incremental ones into hashmap).
func TestSharedCheckpointDirFailsOnce(t *testing.T) {
	t.Run("another-backend", func(t *testing.T) {
		s, pointer := finishedWordcount(t, "leveldb", map[string]any{"execution.checkpointing.incremental": true})
		hashmap := s.variant(t, filepath.Join(s.dir, "hashmap.yaml"), map[string]any{"state.backend.type": "hashmap"})
		failsOnce(t, startRunner(t, "run", "--config", hashmap, "--plugin-dir", testbin.PluginDir(t), "--from", "latest"),
			pointer, "taken by the leveldb state backend", "job.name or execution.checkpointing.dir")
	})
	t.Run("another-job-type", func(t *testing.T) {
		s, pointer := finishedWordcount(t, "hashmap", nil)
		aggregate := filepath.Join(s.dir, "aggregate.yaml")
		writeConfig(t, aggregate, extended(t, edited(t, s.conf, map[string]any{"job.type": "aggregate", "job.input": nil}),
			map[string]any{"job.keys": 100, "job.records": 1000}))
		failsOnce(t, startRunner(t, "run", "--config", aggregate, "--plugin-dir", testbin.PluginDir(t), "--from", "latest"),
			pointer, `taken by a "wordcount" job`)
	})
}

// TestSignalSaysWhatStays: the runner stopped by SIGINT says what --from latest can resume:
// the newest checkpoint, by its pointer; nothing when the job completed none; nothing on
// jmstorage without a directory, whose checkpoints die with it.
func TestSignalSaysWhatStays(t *testing.T) {
	cases := []struct {
		name, storage, waitFor string
		edit                   map[string]any
		wants                  []string
	}{
		{"checkpoints", "filesystem", "checkpoint complete", nil, []string{"its checkpoints stay for --from latest (the newest: checkpoint "}},
		{"none-yet", "filesystem", "first record processed", map[string]any{"execution.checkpointing.interval": "1h"},
			[]string{"the job has no completed checkpoint, so --from latest has nothing to resume"}},
		{"jmstorage-memory", "jobmanager", "checkpoint complete", map[string]any{"execution.checkpointing.dir": nil},
			[]string{"its checkpoints were in the memory of jmstorage", "nothing is left for --from latest"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newWordcount(t, "hashmap", c.storage, 1<<20, 2000, nil)
			s.edit(t, c.edit)
			r := s.run(t)
			waitOutput(t, r, c.waitFor, time.Minute)
			r.cmd.Process.Signal(syscall.SIGINT)
			waitExit(t, r, time.Now())
			out := r.out.String()
			for _, want := range append(c.wants, "the runner was stopped by a signal") {
				if !strings.Contains(out, want) {
					t.Fatalf("the runner does not say %q:\n%s", want, tail(out, 5))
				}
			}
			if c.name == "checkpoints" {
				newest := latestPointer(t, s)
				if _, err := os.Stat(newest); err != nil || !strings.Contains(out, newest) {
					t.Fatalf("the message does not name the newest checkpoint %s (%v):\n%s", newest, err, tail(out, 3))
				}
			} else if strings.Contains(out, "stay for --from latest") {
				t.Fatalf("the runner says checkpoints stay:\n%s", tail(out, 3))
			}
			t.Logf("%s", lastLine(out))
		})
	}
}

// TestAnotherJobsCheckpointFailsOnce: --from a checkpoint of another job of the same type,
// with its own output directory, fails at once on that job's output (its sink's pending
// files are not in this job's), and the error says whose checkpoint it is, not only which
// file is missing.
func TestAnotherJobsCheckpointFailsOnce(t *testing.T) {
	s, pointer := finishedWordcount(t, "hashmap", nil)
	other := s.variant(t, filepath.Join(s.dir, "other.yaml"), map[string]any{"job.name": "other", "job.output": filepath.Join(s.dir, "other-out")})
	failsOnce(t, startRunner(t, "run", "--config", other, "--plugin-dir", testbin.PluginDir(t), "--from", pointer),
		pointer, `taken by another job, "wc" (this job is "other")`)
}

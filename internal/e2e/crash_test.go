package e2e

import (
	"errors"
	"maps"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/wordcheck"
)

// wordcountSetup writes an input of size bytes and a config for backend and storage.
type wordcountSetup struct {
	dir, config, input, output string
	// conf is the configuration, flat keys to values; write puts it in the file config.
	conf     map[string]any
	expected map[string]int64
}

// newWordcount writes the input and the configuration of a word count, with the keys of
// extra added to it.
func newWordcount(t *testing.T, backend, storage string, size int, rate int, extra map[string]any) *wordcountSetup {
	t.Helper()
	dir := t.TempDir()
	s := &wordcountSetup{dir: dir, input: filepath.Join(dir, "input.txt"), output: filepath.Join(dir, "out"), config: filepath.Join(dir, "config.yaml")}
	if err := wordcheck.WriteText(s.input, size, 20000, 7); err != nil {
		t.Fatal(err)
	}
	var err error
	if s.expected, err = wordcheck.Expected(s.input); err != nil {
		t.Fatal(err)
	}
	s.conf = map[string]any{
		"state.backend.type":                    backend,
		"state.backend.leveldb.localdir":        filepath.Join(dir, "leveldb"),
		"execution.checkpointing.storage":       storage,
		"execution.checkpointing.dir":           filepath.Join(dir, "checkpoints"),
		"execution.checkpointing.interval":      "100ms",
		"execution.checkpointing.num-retained":  2,
		"restart-strategy.fixed-delay.attempts": 20,
		"restart-strategy.fixed-delay.delay":    "50ms",
		"job.name":                              "wc",
		"job.type":                              "wordcount",
		"job.parallelism":                       2,
		"job.input":                             s.input,
		"job.output":                            s.output,
		"job.rate":                              rate,
		"job.lease.timeout":                     leaseTimeout,
	}
	s.add(t, extra)
	return s
}

// edit changes keys the configuration has and writes it; a nil value removes the key.
func (s *wordcountSetup) edit(t *testing.T, changes map[string]any) {
	t.Helper()
	s.conf = edited(t, s.conf, changes)
	writeConfig(t, s.config, s.conf)
}

// variant writes the configuration with changes made to keys it has (as edit) to the file
// path, and returns path; s's own configuration stays as it is.
func (s *wordcountSetup) variant(t *testing.T, path string, changes map[string]any) string {
	t.Helper()
	writeConfig(t, path, edited(t, s.conf, changes))
	return path
}

// add adds keys the configuration does not have yet and writes it.
func (s *wordcountSetup) add(t *testing.T, keys map[string]any) {
	t.Helper()
	s.conf = extended(t, s.conf, keys)
	writeConfig(t, s.config, s.conf)
}

// edited returns conf with changes made to keys it has (a nil value removes one). A key it
// does not have fails the test: a typo must not pass for a change that was made.
func edited(t *testing.T, conf, changes map[string]any) map[string]any {
	t.Helper()
	out := maps.Clone(conf)
	for k, v := range changes {
		if _, ok := out[k]; !ok {
			t.Fatalf("configuration change of %q: the configuration has no such key (it has %v)", k, slices.Sorted(maps.Keys(conf)))
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// extended returns conf with keys added. A key it has already fails the test: an addition
// must not silently replace a value.
func extended(t *testing.T, conf, keys map[string]any) map[string]any {
	t.Helper()
	out := maps.Clone(conf)
	for k, v := range keys {
		if _, ok := out[k]; ok {
			t.Fatalf("configuration addition of %q: the configuration has it already (%v)", k, out[k])
		}
		out[k] = v
	}
	return out
}

func (s *wordcountSetup) run(t *testing.T, extra ...string) *runner {
	return startRunner(t, append([]string{"run", "--config", s.config, "--plugin-dir", testbin.PluginDir(t)}, extra...)...)
}

func (s *wordcountSetup) check(t *testing.T, logs string) {
	t.Helper()
	if err := wordcheck.Check(s.expected, s.output); err != nil {
		t.Fatalf("%v\nrunner output:\n%s", err, tail(logs, 40))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// TestCrashRecovery kills the backend plugin, the storage plugin or the runner itself
// with SIGKILL at random moments of a word count and checks that the committed output
// equals the failure-free result: for every word, the counts 1..N each exactly once.
func TestCrashRecovery(t *testing.T) {
	t.Parallel() // long and mostly waiting: it runs beside the other such tests
	seed := time.Now().UnixNano()
	t.Logf("random seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for _, backend := range []string{"hashmap", "leveldb"} {
		for _, victim := range []string{"backend", "storage", "runner"} {
			t.Run(backend+"/kill-"+victim, func(t *testing.T) {
				s := newWordcount(t, backend, "filesystem", 3<<20, 25000, nil)
				r := s.run(t)
				if !r.owns(t) { // kills are for a running job, see TestCrashLoop
					t.Fatalf("the job did not start:\n%s", tail(r.out.String(), 20))
				}
				kills := 0
				for kills < 3 && !r.exited() {
					time.Sleep(time.Duration(300+rng.Intn(700)) * time.Millisecond) // a random moment to kill at: what the test varies, not a wait
					switch victim {
					case "backend", "storage":
						name := backend
						if victim == "storage" {
							name = "fsstorage"
						}
						if pid := pluginOf(r.cmd.Process.Pid, name); pid > 0 {
							syscall.Kill(pid, syscall.SIGKILL)
							kills++
						}
					case "runner":
						// --from latest needs a completed checkpoint to resume from.
						if r.exited() || !strings.Contains(r.out.String(), "checkpoint complete") {
							break
						}
						plugins := []int{pluginOf(r.cmd.Process.Pid, backend), pluginOf(r.cmd.Process.Pid, "fsstorage")}
						r.cmd.Process.Kill()
						<-r.done
						kills++
						waitGone(t, plugins, 5*time.Second)
						r = s.runWhenFree(t, "--from", "latest")
					}
				}
				if kills == 0 {
					t.Fatalf("the job finished before any kill; output:\n%s", r.out.String())
				}
				if err := r.wait(t, 2*time.Minute); err != nil {
					t.Fatalf("runner failed after %d kills: %v\n%s", kills, err, tail(r.out.String(), 40))
				}
				t.Logf("%d kills of the %s", kills, victim)
				s.check(t, r.out.String())
			})
		}
	}
}

// TestJobManagerStorageLossStops checks that when jmstorage dies, the runner says its
// in-memory checkpoints are gone and stops instead of pretending to restore.
func TestJobManagerStorageLossStops(t *testing.T) {
	s := newWordcount(t, "hashmap", "jobmanager", 2<<20, 20000, nil)
	s.edit(t, map[string]any{"execution.checkpointing.dir": nil})
	r := s.run(t)
	var pid int
	waitFor(t, r, "a completed checkpoint and the jmstorage plugin", 20*time.Second, func(out string) error {
		if !strings.Contains(out, "checkpoint complete") {
			return errors.New("no checkpoint complete")
		}
		if pid = pluginOf(r.cmd.Process.Pid, "jmstorage"); pid == 0 {
			return errors.New("no jmstorage process")
		}
		return nil
	})
	syscall.Kill(pid, syscall.SIGKILL)
	err := r.wait(t, time.Minute)
	if err == nil {
		t.Fatalf("runner exited 0 after losing its in-memory checkpoints:\n%s", r.out.String())
	}
	out := r.out.String()
	for _, want := range []string{"jmstorage", "memory", "start-over-on-checkpoint-loss"} {
		if !strings.Contains(out, want) {
			t.Fatalf("error output does not mention %q:\n%s", want, tail(out, 20))
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

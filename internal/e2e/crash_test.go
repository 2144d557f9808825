package e2e

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
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
	expected                   map[string]int64
}

func newWordcount(t *testing.T, backend, storage string, size int, rate int, extra string) *wordcountSetup {
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
	cfg := fmt.Sprintf(`state.backend.type: %s
state.backend.leveldb.localdir: %s
execution.checkpointing.storage: %s
execution.checkpointing.dir: %s
execution.checkpointing.interval: 100ms
execution.checkpointing.num-retained: 2
restart-strategy.fixed-delay.attempts: 20
restart-strategy.fixed-delay.delay: 50ms
job:
  name: wc
  type: wordcount
  parallelism: 2
  input: %s
  output: %s
  rate: %d
  lease:
    timeout: %s
%s`, backend, filepath.Join(dir, "leveldb"), storage, filepath.Join(dir, "checkpoints"), s.input, s.output, rate, leaseTimeout, extra)
	if err := os.WriteFile(s.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
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
	seed := time.Now().UnixNano()
	t.Logf("random seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for _, backend := range []string{"hashmap", "leveldb"} {
		for _, victim := range []string{"backend", "storage", "runner"} {
			t.Run(backend+"/kill-"+victim, func(t *testing.T) {
				s := newWordcount(t, backend, "filesystem", 3<<20, 25000, "")
				r := s.run(t)
				if !r.owns(t) { // kills are for a running job, see TestCrashLoop
					t.Fatalf("the job did not start:\n%s", tail(r.out.String(), 20))
				}
				kills := 0
				for kills < 3 && !r.exited() {
					time.Sleep(time.Duration(300+rng.Intn(700)) * time.Millisecond)
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
	s := newWordcount(t, "hashmap", "jobmanager", 2<<20, 20000, "")
	os.WriteFile(s.config, []byte(strings.Replace(mustRead(t, s.config), "execution.checkpointing.dir:", "# execution.checkpointing.dir:", 1)), 0o644)
	r := s.run(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if pid := pluginOf(r.cmd.Process.Pid, "jmstorage"); pid > 0 && strings.Contains(r.out.String(), "checkpoint complete") {
			syscall.Kill(pid, syscall.SIGKILL)
			break
		}
		if time.Now().After(deadline) || r.exited() {
			t.Fatalf("no checkpoint completed in time; output:\n%s", r.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
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

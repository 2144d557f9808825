package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/testwait"
)

// proc is a process found in /proc.
type proc struct {
	pid, ppid int
	exe       string
}

// processes lists the live processes whose executable name starts with prefix.
func processes(prefix string) []proc {
	var out []proc
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || !strings.HasPrefix(filepath.Base(exe), prefix) {
			continue
		}
		out = append(out, proc{pid: pid, ppid: ppid, exe: exe})
	}
	return out
}

// pluginOf returns the pid of the named plugin started by runner pid, or 0.
func pluginOf(runner int, name string) int {
	for _, p := range processes("flowstate-plugin-" + name) {
		if p.ppid == runner {
			return p.pid
		}
	}
	return 0
}

// killWhenRecovered kills r's plugin name with SIGKILL up to n times: first once a
// checkpoint completed, then each time once the job restored a checkpoint after the kill
// before and completed another. It returns how many kills it made before r ended.
func killWhenRecovered(t *testing.T, r *runner, name string, n int) int {
	t.Helper()
	kills, from := 0, 0 // from: the output's length at the last kill
	for ; kills < n; kills++ {
		var pid int
		testwait.For(t, fmt.Sprintf("kill %d of %s: a restore after the kill before, a completed checkpoint and the plugin", kills+1, name), time.Minute, func() error {
			if r.exited() {
				return nil // the job ended: no more kills
			}
			out := r.out.String()[from:]
			if kills > 0 {
				i := strings.Index(out, "restoring from checkpoint")
				if i < 0 {
					return &outputError{err: errors.New("no restore since the last kill"), r: r}
				}
				out = out[i:]
			}
			if !strings.Contains(out, "checkpoint complete") {
				return &outputError{err: errors.New("no completed checkpoint since"), r: r}
			}
			if pid = pluginOf(r.cmd.Process.Pid, name); pid == 0 {
				return &outputError{err: fmt.Errorf("no %s process", name), r: r}
			}
			return nil
		})
		if r.exited() {
			break
		}
		from = len(r.out.String())
		syscall.Kill(pid, syscall.SIGKILL)
	}
	return kills
}

// waitGone waits until none of pids is alive.
func waitGone(t *testing.T, pids []int, within time.Duration) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("processes %v to end once the runner died (else orphaned plugins)", pids), within, func() error {
		alive := []int{}
		for _, pid := range pids {
			if pid > 0 && syscall.Kill(pid, 0) == nil && !zombie(pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) > 0 {
			return fmt.Errorf("%v alive", alive)
		}
		return nil
	})
}

func zombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && strings.HasPrefix(strings.TrimSpace(string(stat[i+1:])), "Z")
}

// runner is a runner process under test.
type runner struct {
	cmd  *exec.Cmd
	out  testwait.Buffer
	done chan struct{}
	err  error
}

func startRunner(t *testing.T, args ...string) *runner {
	t.Helper()
	return startProcess(t, testbin.Runner(t), args...)
}

// startProcess starts the program at path with args, its output collected, killed when
// the test ends.
func startProcess(t *testing.T, path string, args ...string) *runner {
	t.Helper()
	return startWatched(t, nil, path, args...)
}

// watchedOutput is a runner's output that calls watch with all of it after each write.
type watchedOutput struct {
	r     *runner
	watch func(r *runner, out string)
}

func (w *watchedOutput) Write(p []byte) (int, error) {
	n, err := w.r.out.Write(p)
	w.watch(w.r, w.r.out.String())
	return n, err
}

// startWatched is startProcess with watch (unless nil) called on the output so far after
// each write of the program, in the goroutine that collects it: a test acts on a line at
// once, before the program goes on past it (e.g. kills it right after a log line).
func startWatched(t *testing.T, watch func(r *runner, out string), path string, args ...string) *runner {
	t.Helper()
	r := &runner{done: make(chan struct{})}
	r.cmd = exec.Command(path, args...)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
	if watch != nil {
		w := &watchedOutput{r: r, watch: watch}
		r.cmd.Stdout, r.cmd.Stderr = w, w
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.err = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.done
	})
	return r
}

func (r *runner) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(within):
		r.cmd.Process.Kill()
		<-r.done
		t.Fatalf("runner did not finish within %s; output:\n%s", within, r.out.String())
		return nil
	}
}

func (r *runner) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
)

// controlLine is the runner's log line naming its control endpoint.
var controlLine = regexp.MustCompile(`control endpoint listening: address=(\S+)`)

// controlAddress waits for r to log its control endpoint and returns its address.
func controlAddress(t *testing.T, r *runner) string {
	t.Helper()
	return waitMatch(t, r, controlLine, time.Minute)[1]
}

// TestTwoRunnersOfOneJob starts two runners of one configuration at once: exactly one
// runs the job; the other exits with an error naming the holder's pid and control
// endpoint, job.lease.timeout, that the holder is alive on this machine and --wait, and
// prints no control endpoint of its own; the committed output is exactly the input's
// counts.
func TestTwoRunnersOfOneJob(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 15000, nil)
	rs := []*runner{s.run(t), s.run(t)}
	var winner, loser *runner
	select { // the refused one exits
	case <-rs[0].done:
		winner, loser = rs[1], rs[0]
	case <-rs[1].done:
		winner, loser = rs[0], rs[1]
	case <-time.After(2 * time.Minute):
		t.Fatal("neither runner exited")
	}
	if err := loser.wait(t, time.Minute); err == nil {
		t.Fatalf("the second runner exited 0:\n%s", tail(loser.out.String(), 20))
	}
	addr := controlAddress(t, winner)
	pid := strconv.Itoa(winner.cmd.Process.Pid)
	for _, want := range []string{"is held by", `job "wc"`, "pid " + pid, "control endpoint " + addr,
		"(job.lease.timeout " + leaseTimeout + " of the holder); pid " + pid + " is alive on this machine", "run with --wait"} {
		if !strings.Contains(loser.out.String(), want) {
			t.Fatalf("the refusal does not say %q:\n%s", want, tail(loser.out.String(), 10))
		}
	}
	for _, own := range []string{"control endpoint and web page:", "control endpoint listening"} {
		if strings.Contains(loser.out.String(), own) {
			t.Fatalf("the refused runner printed its own control endpoint (%q):\n%s", own, tail(loser.out.String(), 10))
		}
	}
	t.Logf("the second runner: %s", lastLine(loser.out.String()))
	if strings.Contains(loser.out.String(), "checkpoint complete") {
		t.Fatalf("the refused runner completed a checkpoint:\n%s", tail(loser.out.String(), 20))
	}
	if err := winner.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("the running runner: %v\n%s", err, tail(winner.out.String(), 30))
	}
	s.check(t, winner.out.String())
}

// TestAnotherJobOnTheSameOutputIsRefused runs a second job, with its own name and
// checkpoints, into the output directory of a running one: it is refused, naming the
// running job, and the running job's output is exact.
func TestAnotherJobOnTheSameOutputIsRefused(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 10000, nil)
	other := s.variant(t, filepath.Join(s.dir, "other.yaml"), map[string]any{
		"job.name":                    "other",
		"execution.checkpointing.dir": filepath.Join(s.dir, "other-checkpoints"),
	})
	r := s.run(t)
	if !r.owns(t) {
		t.Fatalf("the first runner did not take its job:\n%s", tail(r.out.String(), 20))
	}
	o := startRunner(t, "run", "--config", other, "--plugin-dir", testbin.PluginDir(t))
	if err := o.wait(t, time.Minute); err == nil {
		t.Fatalf("a second job writing the same output ran:\n%s", tail(o.out.String(), 20))
	}
	for _, want := range []string{"output directory " + s.output + " is held by", `job "wc"`, "pid " + strconv.Itoa(r.cmd.Process.Pid)} {
		if !strings.Contains(o.out.String(), want) {
			t.Fatalf("the refusal does not say %q:\n%s", want, tail(o.out.String(), 10))
		}
	}
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 30))
	}
	s.check(t, r.out.String())
}

// TestTakeoverAfterKill kills a runner with SIGKILL once a checkpoint completed; `run
// --from latest` takes the job over at once, without waiting for the dead runner's lease
// to expire (its pid is gone), says whose leases it took and why, and the output is
// exact.
func TestTakeoverAfterKill(t *testing.T) {
	t.Parallel() // long and mostly waiting: it runs beside the other such tests
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 8000, nil)
	a := s.run(t)
	waitOutput(t, a, "checkpoint complete", time.Minute)
	plugins := []int{pluginOf(a.cmd.Process.Pid, "hashmap"), pluginOf(a.cmd.Process.Pid, "fsstorage")}
	a.cmd.Process.Kill()
	<-a.done
	waitGone(t, plugins, 5*time.Second)
	b := s.run(t, "--from", "latest")
	if !b.owns(t) {
		t.Fatalf("the runner started after the kill did not take the job at once:\n%s", tail(b.out.String(), 30))
	}
	took := regexp.MustCompile(tookOverAtOnce + `: lease="checkpoint storage[^\n]*pid ` + strconv.Itoa(a.cmd.Process.Pid) + `[^\n]*why="pid \d+ is gone"`)
	if !took.MatchString(b.out.String()) {
		t.Fatalf("the new runner does not say it took over dead pid %d's lease at once:\n%s", a.cmd.Process.Pid, tail(b.out.String(), 40))
	}
	if err := b.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("the runner that took over: %v\n%s", err, tail(b.out.String(), 30))
	}
	s.check(t, b.out.String())
}

// TestFrozenRunnerIsFenced freezes a runner with SIGSTOP past its lease timeout while a
// second one takes the job over from the latest checkpoint, lets the first go on once the
// second completed a checkpoint, and checks that the first stops, saying it lost the
// lease, without completing a checkpoint or committing anything more: the output is
// exact. It runs with checkpoints on the local disk and on S3.
func TestFrozenRunnerIsFenced(t *testing.T) {
	t.Parallel() // long and mostly waiting: it runs beside the other such tests
	for _, storage := range []string{"file", "s3"} {
		t.Run(storage, func(t *testing.T) {
			s := newWordcount(t, "hashmap", "filesystem", 2<<20, 3000, nil)
			if storage == "s3" {
				s.onS3(t)
			}
			a := s.run(t)
			waitOutput(t, a, "checkpoint complete", time.Minute)
			if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a.cmd.Process.Signal(syscall.SIGCONT) })
			b := s.runWhenFree(t, "--from", "latest")
			if !strings.Contains(b.out.String(), "took over a lease") {
				t.Fatalf("the second runner did not take over the frozen one's lease:\n%s", tail(b.out.String(), 30))
			}
			waitOutput(t, b, "checkpoint complete", time.Minute)
			frozenAt := len(a.out.String())
			if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			if err := a.wait(t, time.Minute); err == nil {
				t.Fatalf("the runner that lost its lease exited 0:\n%s", tail(a.out.String(), 30))
			}
			after := a.out.String()[frozenAt:]
			if !strings.Contains(after, "lost the lease") || !strings.Contains(after, "stopped without committing anything more") {
				t.Fatalf("the runner that lost its lease does not say so:\n%s", tail(a.out.String(), 30))
			}
			t.Logf("the woken runner: %s", lastLine(after))
			if strings.Contains(after, "checkpoint complete") {
				t.Fatalf("the runner that lost its lease completed a checkpoint after it woke up:\n%s", after)
			}
			if err := b.wait(t, 2*time.Minute); err != nil {
				t.Fatalf("the runner that took over: %v\n%s", err, tail(b.out.String(), 30))
			}
			s.check(t, b.out.String())
		})
	}
}

// TestStopOfAnotherJobIsRefused runs a job on a pinned control port and sends `stop` with
// the configuration of another job on the same port: the endpoint refuses it, naming both
// jobs, and the job goes on to an exact output.
func TestStopOfAnotherJobIsRefused(t *testing.T) {
	port := freePort(t)
	s := newWordcount(t, "hashmap", "filesystem", 2<<20, 4000, map[string]any{"rest.port": port})
	other := s.variant(t, filepath.Join(s.dir, "other.yaml"), map[string]any{
		"job.name":                    "other",
		"execution.checkpointing.dir": filepath.Join(s.dir, "other-checkpoints"),
		"job.output":                  filepath.Join(s.dir, "other-out"),
	})
	r := s.run(t)
	if !r.owns(t) {
		t.Fatalf("the runner did not take its job:\n%s", tail(r.out.String(), 20))
	}
	out, err := runnerCmd(t, "stop", "--config", other, "--plugin-dir", testbin.PluginDir(t))
	if err == nil {
		t.Fatalf("stop with another job's configuration succeeded: %s", out)
	}
	if !strings.Contains(err.Error(), `serves job "wc", not job "other"`) {
		t.Fatalf("stop of another job: %v; want a refusal naming both jobs", err)
	}
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("the job after a refused stop: %v\n%s", err, tail(r.out.String(), 30))
	}
	if strings.Contains(r.out.String(), "job cancelled") {
		t.Fatalf("the job was cancelled:\n%s", tail(r.out.String(), 10))
	}
	s.check(t, r.out.String())
}

// TestTwoJobsSideBySide runs two jobs at once on ephemeral control ports: `savepoint`
// with each configuration reaches its own job (the savepoint lands in that job's
// savepoint directory), and both outputs are exact.
func TestTwoJobsSideBySide(t *testing.T) {
	t.Parallel() // long and mostly waiting: it runs beside the other such tests
	var setups []*wordcountSetup
	var runners []*runner
	for _, name := range []string{"alpha", "beta"} {
		// About 30 s of input at this rate: the jobs must still run when the savepoints
		// are asked for, after both runners and the savepoint commands started on what
		// may be a busy machine.
		s := newWordcount(t, "hashmap", "filesystem", 512<<10, 500, nil)
		s.edit(t, map[string]any{"job.name": name})
		s.add(t, map[string]any{"execution.checkpointing.savepoint-dir": filepath.Join(s.dir, "savepoints")})
		setups = append(setups, s)
		runners = append(runners, s.run(t))
	}
	for i, r := range runners {
		if !r.owns(t) {
			t.Fatalf("job %d did not start:\n%s", i, tail(r.out.String(), 20))
		}
	}
	for i, s := range setups {
		out, err := runnerCmd(t, "savepoint", "--config", s.config, "--plugin-dir", testbin.PluginDir(t))
		if err != nil {
			t.Fatalf("savepoint of job %d: %v\n%s", i, err, tail(runners[i].out.String(), 20))
		}
		ptr := lastLine(out)
		if !strings.HasPrefix(strings.TrimPrefix(ptr, "file://"), filepath.Join(s.dir, "savepoints")+"/") {
			t.Fatalf("savepoint of job %d went to %s, not its own savepoint directory", i, ptr)
		}
	}
	for i, r := range runners {
		if err := r.wait(t, 2*time.Minute); err != nil {
			t.Fatalf("job %d: %v\n%s", i, err, tail(r.out.String(), 30))
		}
		setups[i].check(t, r.out.String())
	}
}

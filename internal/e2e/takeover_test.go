package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/sdk/filelease"
)

// tookOverAtOnce is logged for each lease a runner took over from a holder that ended on
// this machine, without waiting for its expiry.
const tookOverAtOnce = "took over a lease at once: its holder has ended on this machine"

// TestSupervisedRestartsAfterKills does what a supervisor (systemd Restart=on-failure,
// docs/operations.md) does: it starts `runner run --from latest-if-any` (the first start,
// with no checkpoint yet, starts fresh), kills the runner with SIGKILL once it completed a
// checkpoint, and starts the very same command again at once, three times. With a
// job.lease.timeout of 60 s, each restart must take both leases over at once (the dead
// runner's pid is gone) and the whole loop must end within one timeout; the committed
// output equals the input's counts exactly.
func TestSupervisedRestartsAfterKills(t *testing.T) {
	t.Parallel() // long and mostly waiting: it runs beside the other such tests
	const timeout = 60 * time.Second
	s := newWordcount(t, "hashmap", "filesystem", 3<<20, 20000, nil)
	s.edit(t, map[string]any{"job.lease.timeout": timeout.String()})
	start := time.Now()
	r := s.run(t, "--from", "latest-if-any")
	if !r.owns(t) {
		t.Fatalf("the first start did not take its job:\n%s", tail(r.out.String(), 20))
	}
	waitOutput(t, r, "--from latest-if-any: the job has no completed checkpoint yet: starting fresh", time.Minute)
	for kill := 1; kill <= 3; kill++ {
		waitOutput(t, r, "checkpoint complete", time.Minute)
		dead := r.cmd.Process.Pid
		plugins := []int{pluginOf(dead, "hashmap"), pluginOf(dead, "fsstorage")}
		r.cmd.Process.Kill()
		<-r.done
		waitGone(t, plugins, 5*time.Second)
		restarted := time.Now()
		r = s.run(t, "--from", "latest-if-any")
		if !r.owns(t) {
			t.Fatalf("restart %d did not take the job at once:\n%s", kill, tail(r.out.String(), 20))
		}
		took := time.Since(restarted)
		out := r.out.String()
		for _, lease := range []string{`lease="output directory ` + s.output, `lease="checkpoint storage`} {
			if !strings.Contains(out, tookOverAtOnce+": "+lease) {
				t.Fatalf("restart %d does not say it took the %s lease over at once:\n%s", kill, lease, tail(out, 30))
			}
		}
		if !strings.Contains(out, "pid "+strconv.Itoa(dead)+" is gone") {
			t.Fatalf("restart %d does not name the dead pid %d:\n%s", kill, dead, tail(out, 30))
		}
		waitOutput(t, r, "restoring from the latest checkpoint", time.Minute)
		t.Logf("restart %d held the job %s after it started, %s into the loop", kill, took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("the last runner: %v\n%s", err, tail(r.out.String(), 30))
	}
	if elapsed := time.Since(start); elapsed >= timeout {
		t.Fatalf("three kills and restarts took %s: not less than one job.lease.timeout (%s)", elapsed, timeout)
	} else {
		t.Logf("three kills and restarts, and the job's end, in %s (job.lease.timeout %s)", elapsed.Round(time.Millisecond), timeout)
	}
	s.check(t, r.out.String())
}

// countdownLine is a line of the countdown of a runner waiting for a lease to expire.
var countdownLine = regexp.MustCompile(`lease of checkpoint storage [^\n]* expires \(job\.lease\.timeout 8s\): \d+s left of \d+s`)

// TestWaitOutsAnotherHostsLease: the job's lease in its checkpoint storage is held by a
// runner of another host (a record written as such a runner writes it, renewed just now,
// with a lease timeout of 8 s, long enough that the runner starts well inside it). `run
// --wait` says it waits, counts down, takes the job over once that lease expired (not
// before), and runs it to an exact end.
func TestWaitOutsAnotherHostsLease(t *testing.T) {
	s := newWordcount(t, "hashmap", "filesystem", 1<<20, 0, nil)
	// The binaries are built before the lease is written, so a build run by this test
	// alone cannot outlast the lease's 8 s.
	testbin.Runner(t)
	testbin.PluginDir(t)
	path := filepath.Join(s.dir, "checkpoints", "wc", "_lease")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	rec := ownership.Record{
		Holder: ownership.Holder{Job: "wc", Host: "another-host", PID: 4242, Since: time.Now(), Instance: "elsewhere"},
		Epoch:  3, Renewed: time.Now(), TTLMillis: 8000, Seq: 9,
	}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := filelease.New(path).WriteLease(context.Background(), data, ""); err != nil {
		t.Fatal(err)
	}
	r := s.run(t, "--wait")
	if !r.owns(t) {
		t.Fatalf("the runner did not take the job:\n%s", tail(r.out.String(), 30))
	}
	owned := time.Now()
	if owned.Before(rec.Expires()) {
		t.Fatalf("the runner took the job at %s, before the other host's lease expired at %s", owned.Format(time.RFC3339Nano), rec.Expires().Format(time.RFC3339Nano))
	}
	out := r.out.String()
	for _, want := range []string{
		"waiting for its lease to expire, then taking it over",
		"it runs on another-host, not on this machine",
		"took over a lease whose holder stopped renewing it", "pid 4242 on another-host",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("the waiting runner does not say %q:\n%s", want, tail(out, 30))
		}
	}
	if !countdownLine.MatchString(out) {
		t.Fatalf("the waiting runner shows no countdown:\n%s", tail(out, 30))
	}
	if err := r.wait(t, 2*time.Minute); err != nil {
		t.Fatalf("%v\n%s", err, tail(r.out.String(), 30))
	}
	if got := readLease(t, path); got == nil || got.Epoch != rec.Epoch+1 || !got.Released {
		t.Fatalf("the lease after the run = %+v; want epoch %d, released", got, rec.Epoch+1)
	}
	s.check(t, r.out.String())
}

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/natstest"
	"github.com/flowstate/flowstate/internal/testbin"
)

// TestDistributedStopWithSavepointResumesOnTwoRunners: three runners run the word count;
// `runner stop --savepoint` stops the whole job with a savepoint of every task and
// prints one manifest, and every runner exits 0; `runner run --from MANIFEST` on two
// runners resumes every task from it, and the output of what was published before and
// after the stop is exact.
func TestDistributedStopWithSavepointResumesOnTwoRunners(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	target := filepath.Join(t.TempDir(), "savepoints")
	d := newDistWordcount(t, c, 1, 3, map[string]any{"job.rate": 2000, "execution.checkpointing.savepoint-dir": target})
	d.phase(t, 1, 40<<10)
	first := []*runner{d.start(t), d.start(t), d.start(t)}
	d.waitExact(t, "the exact count on three runners", 3*time.Minute)

	out, err := runnerCmd(t, "stop", "--config", d.config, "--savepoint")
	if err != nil {
		t.Fatalf("stop --savepoint: %v\n%s\n%s", err, out, d.logs())
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	manifest := lines[len(lines)-1]
	if !strings.Contains(manifest, target) {
		t.Fatalf("stop printed %q: want the manifest's pointer under %s last", out, target)
	}
	for i, r := range first {
		if err := r.wait(t, 2*time.Minute); err != nil {
			t.Fatalf("runner %d after the stop: %v\n%s", i, err, tail(r.out.String(), 20))
		}
	}
	m := readMetadata(t, manifest)
	if len(m.Tasks) != 6 {
		t.Fatalf("the manifest lists %d tasks' savepoints, want 6 (2 sub-topologies x 3): %v", len(m.Tasks), m.Tasks)
	}

	d.phase(t, 2, 40<<10) // published while no runner runs
	d.start(t, "--from", manifest)
	d.start(t, "--from", manifest)
	// Tasks that started fresh would count every word from 1 again: doubled counts.
	d.waitExact(t, "the exact count resumed on two runners", 3*time.Minute)
}

// TestDistributedFrozenAndRestartedRunners: a runner frozen (SIGSTOP) past its lease has
// its tasks claimed by the other; woken (SIGCONT), nothing it commits lands and it takes
// a share again. A runner killed with -9 and started again on the same machine takes its
// dead predecessor's tasks at once, long before their leases (120 s) would expire. After
// each, the output is exact.
func TestDistributedFrozenAndRestartedRunners(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	d := newDistWordcount(t, c, 1, 2, map[string]any{"job.rate": 1000, "job.lease.timeout": "3s",
		"restart-strategy.fixed-delay.attempts": 1000, "restart-strategy.fixed-delay.delay": "200ms"})
	a, b := d.start(t), d.start(t)
	ida, idb := member(t, a), member(t, b)
	d.waitHeld(t, "every task running on both runners", 2*time.Minute, ida, idb)

	d.phase(t, 1, 30<<10)
	if err := b.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	d.waitHeld(t, "the frozen runner's tasks taken over", 2*time.Minute, ida)
	d.waitExact(t, "the exact count while a runner is frozen", 3*time.Minute)
	if err := b.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, b, "the woken runner's lost leases", time.Minute, func(out string) error {
		if !strings.Contains(out, "lease was lost") {
			return fmt.Errorf("no lost lease reported yet")
		}
		return nil
	})
	d.phase(t, 2, 30<<10)
	d.waitHeld(t, "the woken runner taking a share again", 2*time.Minute, ida, idb)
	d.waitExact(t, "the exact count after the frozen runner woke", 3*time.Minute)

	// A runner under leases far longer than the wait, killed with -9 and started again on
	// this machine.
	for _, r := range d.runners {
		r.cmd.Process.Kill()
		<-r.done
	}
	d.edit(t, map[string]any{"job.lease.timeout": "120s"})
	a = d.start(t)
	d.waitHeld(t, "every task on one runner under 120 s leases", 2*time.Minute, member(t, a))
	d.phase(t, 3, 30<<10)
	a.cmd.Process.Kill()
	<-a.done
	a = d.start(t) // its tasks' leases are live: the dead holder's pid is gone
	d.waitHeld(t, "every task claimed at once by the runner started again", 60*time.Second, member(t, a))
	d.waitExact(t, "the exact count after the restart", 3*time.Minute)
}

// TestDistributedCancelAfterAKillDeletesEveryCheckpoint: one of two runners is killed
// with -9 and the job is cancelled (`runner stop`, no savepoint) at once: the stop waits
// for the runner left to claim the dead one's tasks as their leases lapse, and cancels
// those runs once they hold their checkpoints, so that the cancel deletes every task's
// checkpoints, as a lone runner's cancel deletes the job's (a run cancelled while it
// started left them, and a fresh run restored them: CI saw it so). The runner left exits 0.
func TestDistributedCancelAfterAKillDeletesEveryCheckpoint(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	d := newDistWordcount(t, c, 1, 2, map[string]any{"job.rate": 1000, "job.lease.timeout": "3s"})
	d.phase(t, 1, 20<<10)
	a, b := d.start(t), d.start(t)
	d.waitHeld(t, "every task running on both runners", 2*time.Minute, member(t, a), member(t, b))
	d.waitExact(t, "the exact count on two runners", 3*time.Minute)
	checkpoints := d.conf["execution.checkpointing.dir"].(string)
	if n := len(taskChkDirs(t, checkpoints)); n == 0 {
		t.Fatalf("no checkpoint under %s before the cancel", checkpoints)
	}
	b.cmd.Process.Kill()
	<-b.done
	if out, err := runnerCmd(t, "stop", "--config", d.config); err != nil || !strings.Contains(out, `job "wc" cancelled`) {
		t.Fatalf("stop: %v\n%s\n%s", err, out, d.logs())
	}
	if err := a.wait(t, time.Minute); err != nil {
		t.Fatalf("the runner left after the stop: %v\n%s", err, tail(a.out.String(), 30))
	}
	if left := taskChkDirs(t, checkpoints); len(left) > 0 {
		t.Fatalf("the cancel left checkpoints: %v\n%s", left, tail(a.out.String(), 60))
	}
}

// taskChkDirs lists the chk-N directories of every task's directory in checkpoints.
func taskChkDirs(t *testing.T, checkpoints string) []string {
	t.Helper()
	tasks, err := os.ReadDir(checkpoints)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		for _, c := range chkDirs(t, filepath.Join(checkpoints, task.Name())) {
			out = append(out, filepath.Join(task.Name(), c))
		}
	}
	return out
}

// TestDistributedBadInputRefusedByName: a runner whose configuration disagrees with the
// group's (job graph, partition count, checkpoint storage) is refused naming each key; a
// missing bucket, a bucket of other replicas and an unreachable NATS are each a clear
// error; none of them writes anything or disturbs the running job, which `runner stop`
// then cancels: its runner exits 0. A fresh run after the cancel (which deleted the
// checkpoints) is refused while the repartition stream holds the cancelled run's frames.
func TestDistributedBadInputRefusedByName(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	d := newDistWordcount(t, c, 1, 2, nil)
	js := c.JetStream(t)
	if err := js.DeleteKeyValue(context.Background(), clusterBucket); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, args []string, wants ...string) {
		t.Helper()
		out, err := runnerCmdErr(t, append([]string{"run", "--plugin-dir", testbin.PluginDir(t)}, args...)...)
		if err == nil {
			t.Fatalf("%s: the runner ran:\n%s", what, out)
		}
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("%s: the error does not say %q:\n%s", what, w, tail(out, 10))
			}
		}
	}
	refused("no bucket", []string{"--config", d.config}, "KV bucket flowstate does not exist", "nats kv add flowstate")
	if _, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: clusterBucket, Replicas: 1}); err != nil {
		t.Fatal(err)
	}
	r3 := d.variant(t, filepath.Join(d.dir, "r3.yaml"), map[string]any{"cluster.replicas": 3})
	refused("other replicas", []string{"--config", r3}, "KV bucket flowstate has 1 replicas, the configuration asks for 3")
	gone := d.variant(t, filepath.Join(d.dir, "gone.yaml"), map[string]any{"nats.servers": "nats://127.0.0.1:1"})
	refused("NATS unreachable", []string{"--config", gone}, "nats://127.0.0.1:1", "no servers available")

	d.phase(t, 1, 20<<10)
	first := d.start(t)
	d.waitExact(t, "the exact count on the first runner", 3*time.Minute)
	checkGroupEndpointGuarded(t, first)
	refused("other parallelism", []string{"--config", d.config, "-p", "3"},
		`disagrees with the group's`, `job.parallelism is "3" here, "2" in the group`)
	other := d.variant(t, filepath.Join(d.dir, "other.yaml"), map[string]any{
		"execution.checkpointing.dir": "file://" + filepath.Join(d.dir, "elsewhere"), "job.type": "copy"})
	refused("other storage and graph", []string{"--config", other},
		`execution.checkpointing.dir is "file://`+filepath.Join(d.dir, "elsewhere"), `job.type is "copy" here, "wordcount" in the group`, "job graph is")
	d.phase(t, 2, 20<<10)
	d.waitExact(t, "the exact count after the refused runners", 3*time.Minute)

	// runner stop without savepoint cancels the job: every runner leaves, exit 0.
	out, err := runnerCmd(t, "stop", "--config", d.config)
	if err != nil || !strings.Contains(out, `job "wc" cancelled`) {
		t.Fatalf("stop: %v\n%s\n%s", err, out, d.logs())
	}
	for i, r := range d.runners {
		if err := r.wait(t, time.Minute); err != nil {
			t.Fatalf("runner %d after the stop: %v\n%s", i, err, tail(r.out.String(), 20))
		}
	}

	// The cancel deleted the tasks' checkpoints: a fresh run would read the frames the
	// cancelled run left in the repartition stream beside its own, and is refused.
	refused("a fresh run over an earlier run's frames", []string{"--config", d.config},
		"cluster.repartition.stream flowstate-wc holds", "no task of it has a checkpoint to restore", "nats stream rm flowstate-wc")
	if t.Failed() {
		t.Logf("the stopped runner's log:\n%s", tail(first.out.String(), 120))
	}
}

// checkGroupEndpointGuarded sends a distributed runner's control endpoint what a hostile
// client would: a cancel without the token, with a wrong one, from a foreign Origin or for
// a foreign Host, a savepoint to a directory outside the job's, a body of 100 KiB. Each is
// refused with its status, the runner goes on, and none reaches the job's group (the runner
// never says it asked every runner).
func checkGroupEndpointGuarded(t *testing.T, r *runner) {
	t.Helper()
	addr := controlAddress(t, r)
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "flowstate", "rest-"+port+".token"))
	if err != nil {
		t.Fatalf("the distributed runner's token file: %v", err)
	}
	bearer := "Bearer " + strings.TrimSpace(string(b))
	base := "http://" + addr
	for _, c := range []struct {
		what, path, body string
		headers          map[string]string
		want             int
	}{
		{"cancel without the token", "/v1/cancel", `{"job":"wc"}`, nil, http.StatusUnauthorized},
		{"cancel with a wrong token", "/v1/cancel", `{"job":"wc"}`, map[string]string{"Authorization": "Bearer wrong-token-of-some-length"}, http.StatusForbidden},
		{"cancel from a foreign Origin", "/v1/cancel", `{"job":"wc"}`, map[string]string{"Authorization": bearer, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"cancel for a foreign Host", "/v1/cancel", `{"job":"wc"}`, map[string]string{"Authorization": bearer, "Host": "rebound.example:" + port}, http.StatusForbidden},
		{"a savepoint outside the job's directory", "/v1/savepoint", `{"job":"wc","target":"` + filepath.Join(t.TempDir(), "elsewhere") + `"}`, map[string]string{"Authorization": bearer}, http.StatusForbidden},
		{"a cancel of 100 KiB", "/v1/cancel", `{"job":"wc","pad":"` + strings.Repeat("x", 100<<10) + `"}`, map[string]string{"Authorization": bearer}, http.StatusBadRequest},
	} {
		if code, msg := post(t, base+c.path, "application/json", c.body, c.headers); code != c.want {
			t.Errorf("%s: %d %s; want %d", c.what, code, tail(msg, 3), c.want)
		}
	}
	if r.exited() {
		t.Fatalf("a refused request ended the runner:\n%s", tail(r.out.String(), 20))
	}
	if strings.Contains(r.out.String(), "asked every runner of the job") {
		t.Fatalf("a refused request reached the job's group:\n%s", tail(r.out.String(), 20))
	}
}

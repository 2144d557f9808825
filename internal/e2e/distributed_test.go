package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/jsread"
	"github.com/flowstate/flowstate/internal/natstest"
	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/internal/wordcheck"
)

// clusterBucket is the KV bucket of the distributed tests' groups.
const clusterBucket = "flowstate"

// distWordcount is the word count from stream jsIn to stream jsOut run in distributed
// mode by any number of runner processes, on the servers of c.
type distWordcount struct {
	*jsWordcount
	runners []*runner
}

// newDistWordcount sets up a distributed word count on c: the streams and the group's KV
// bucket (with replicas replicas), an unbounded source, parallelism parts, and extra keys.
func newDistWordcount(t *testing.T, c *natstest.Cluster, replicas, parts int, extra map[string]any) *distWordcount {
	t.Helper()
	keys := map[string]any{
		"source.jetstream.bounded": false,
		"cluster.enabled":          true,
		"cluster.kv-bucket":        clusterBucket,
		"cluster.replicas":         replicas,
	}
	for k, v := range extra {
		keys[k] = v
	}
	j := newJSWordcount(t, c, 20000, 0, jsOptions{replicas: replicas}, keys)
	j.edit(t, map[string]any{"job.parallelism": parts})
	ctx := context.Background()
	testwait.For(t, "the group's KV bucket", time.Minute, func() error {
		_, err := j.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: clusterBucket, Replicas: replicas})
		return err
	})
	return &distWordcount{jsWordcount: j}
}

// start starts one more runner of the job.
func (d *distWordcount) start(t *testing.T, extra ...string) *runner {
	t.Helper()
	r := d.run(t, extra...)
	d.runners = append(d.runners, r)
	i := len(d.runners) - 1
	t.Cleanup(func() { // before the runner's kill: a failed test shows where a live runner is
		if !t.Failed() || r.exited() {
			return
		}
		r.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
		}
		t.Logf("runner %d, its goroutines on SIGQUIT:\n%s", i, tail(r.out.String(), 600))
	})
	return r
}

// output reads jsOut's records back, as lines. A read that fails (a cluster that has just
// lost a node may take a while to answer) is an error for the caller's wait to retry.
func (d *distWordcount) output() ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs, err := jsread.All(ctx, d.js, jsOut, 30*time.Second, "out.>")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, m := range msgs {
		b.Write(m.Data)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// check checks jsOut against an independent count of what was published: every word's
// running counts 1..N, each once.
func (d *distWordcount) check(t *testing.T) error {
	t.Helper()
	want, err := wordcheck.Expected(filepath.Join(d.dir, "published"))
	if err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(d.dir, "got")
	if err := os.MkdirAll(got, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := d.output()
	if err != nil {
		return fmt.Errorf("read the output: %w", err)
	}
	if err := os.WriteFile(filepath.Join(got, "records"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	return wordcheck.Check(want, got)
}

// waitExact waits until the output is exact; a failure shows every runner's output.
func (d *distWordcount) waitExact(t *testing.T, what string, within time.Duration) {
	t.Helper()
	testwait.For(t, what, within, func() error {
		for i, r := range d.runners {
			if r.exited() && r.err != nil && !strings.Contains(r.err.Error(), "killed") {
				return testwait.Stop(fmt.Errorf("runner %d failed: %v\n%s", i, r.err, tail(r.out.String(), 30)))
			}
		}
		if err := d.check(t); err != nil {
			return fmt.Errorf("%v\n%s", err, d.logs())
		}
		return nil
	})
}

// logs returns the tails of every runner's output.
func (d *distWordcount) logs() string {
	var b strings.Builder
	for i, r := range d.runners {
		fmt.Fprintf(&b, "--- runner %d:\n%s\n", i, tail(r.out.String(), 15))
	}
	return b.String()
}

// TestDistributedWordCountOnTwoRunners: two runners run the word count together; its
// output is exact.
func TestDistributedWordCountOnTwoRunners(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	d := newDistWordcount(t, c, 1, 2, nil)
	d.publishInput(t)
	d.start(t)
	d.start(t)
	d.waitExact(t, "the exact count on two runners", 2*time.Minute)
	out, err := runnerCmd(t, "status", "--config", d.config, "--plugin-dir", testbin.PluginDir(t))
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	t.Log(out)
	t.Log(d.logs())
}

// phase publishes a text of size bytes (seed decides it), counted.
func (d *distWordcount) phase(t *testing.T, seed int64, size int) {
	t.Helper()
	path := filepath.Join(d.dir, fmt.Sprintf("phase-%d.txt", seed))
	if err := wordcheck.WriteText(path, size, 3000, seed); err != nil {
		t.Fatal(err)
	}
	d.publish(t, mustRead(t, path), true)
}

// member returns the member id runner r joined the group with.
func member(t *testing.T, r *runner) string {
	t.Helper()
	var id string
	waitFor(t, r, "the runner's membership", time.Minute, func(out string) error {
		m := joinedLine.FindStringSubmatch(out)
		if m == nil {
			return fmt.Errorf("not joined yet")
		}
		id = m[1]
		return nil
	})
	return id
}

var joinedLine = regexp.MustCompile(`joined the group of job "[^"]+" as member ([0-9a-f]+)`)

// view is the group's view as `runner status --json` prints it.
type view struct {
	Members []struct{ ID string }
	Tasks   []struct {
		Task, Member string
		Status       *struct{ State string }
	}
}

// view reads the group's view through `runner status --json`.
func (d *distWordcount) view(t *testing.T) (view, error) {
	t.Helper()
	out, err := runnerCmdErr(t, "status", "--json", "--config", d.config, "--plugin-dir", testbin.PluginDir(t))
	if err != nil {
		return view{}, fmt.Errorf("status: %v: %s", err, out)
	}
	var v view
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		return view{}, fmt.Errorf("status --json: %v: %s", err, out)
	}
	return v, nil
}

// waitHeld waits until the view shows every task held and running, by members only of
// ids (nil: any), each of ids holding at least one.
func (d *distWordcount) waitHeld(t *testing.T, what string, within time.Duration, ids ...string) {
	t.Helper()
	testwait.For(t, what, within, func() error {
		v, err := d.view(t)
		if err != nil {
			return err
		}
		holds := map[string]int{}
		for _, tk := range v.Tasks {
			if tk.Status == nil || tk.Status.State != "RUNNING" {
				return fmt.Errorf("task %s is not running (held by %q): %+v", tk.Task, tk.Member, tk.Status)
			}
			holds[tk.Member]++
		}
		for m := range holds {
			if len(ids) > 0 && !slices.Contains(ids, m) {
				return fmt.Errorf("member %s holds tasks, want only %v to: %v", m, ids, holds)
			}
		}
		for _, id := range ids {
			if holds[id] == 0 {
				return fmt.Errorf("member %s holds no task: %v", id, holds)
			}
		}
		return nil
	})
}

// TestDistributedWordCountThroughFailures: three runners run the word count from a stream
// on a 3-node NATS cluster (R3 streams and bucket) with checkpoints on the S3 test server;
// one is killed with -9 mid-run, a fourth starts mid-run, and a NATS node is killed with
// -9. After each, the committed output equals an independent count of the input.
func TestDistributedWordCountThroughFailures(t *testing.T) {
	t.Parallel()
	c := natstest.StartCluster(t, 3, natstest.Options{})
	d := newDistWordcount(t, c, 3, 3, map[string]any{"job.rate": 400, "job.lease.timeout": "4s", "execution.checkpointing.interval": "1s",
		"restart-strategy.fixed-delay.attempts": 1000, "restart-strategy.fixed-delay.delay": "200ms"})
	d.onS3(t)
	a, b, cc := d.start(t), d.start(t), d.start(t)
	ids := []string{member(t, a), member(t, b), member(t, cc)}
	d.waitHeld(t, "every task running on the three runners", 2*time.Minute, ids...)

	d.phase(t, 1, 60<<10)
	waitFor(t, a, "a checkpoint of runner a", time.Minute, func(out string) error {
		if !strings.Contains(out, "checkpoint complete") {
			return fmt.Errorf("none yet")
		}
		return nil
	})
	a.cmd.Process.Kill()
	<-a.done
	d.waitExact(t, "the exact count after runner a was killed", 3*time.Minute)
	d.waitHeld(t, "a's tasks taken over by b and c", 2*time.Minute, ids[1], ids[2])

	d.phase(t, 2, 60<<10)
	e := d.start(t)
	d.waitHeld(t, "the fourth runner taking its share", 2*time.Minute, ids[1], ids[2], member(t, e))
	d.waitExact(t, "the exact count after a fourth runner joined", 3*time.Minute)

	d.phase(t, 3, 60<<10)
	c.Node(0).Kill()
	js, err := jetstream.New(c.Node(1).Connect(t)) // the test's connection may have been the killed node's
	if err != nil {
		t.Fatal(err)
	}
	d.js = js
	d.waitExact(t, "the exact count after a NATS node was killed", 3*time.Minute)
}

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

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
	return r
}

// output reads jsOut's records back, as lines.
func (d *distWordcount) output(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, m := range natstest.ReadAll(t, d.js, jsOut, "out.>") {
		b.Write(m.Data)
		b.WriteByte('\n')
	}
	return b.Bytes()
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
	if err := os.WriteFile(filepath.Join(got, "records"), d.output(t), 0o644); err != nil {
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

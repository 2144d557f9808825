package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/natstest"
	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/wordcheck"
)

// The streams of the JetStream word counts, in the example's shape: the input on four
// partition subjects in.0 .. in.3, the output (allow_atomic) capturing the records' subject
// and the writers' marker subjects.
const (
	jsIn         = "wc-in"
	jsOut        = "wc-out"
	jsInPrefix   = "in"
	jsOutSubject = "out.counts"
	jsMarkers    = "flowstate.markers"
	jsPartitions = 4
)

// jsWordcount is a word count from stream jsIn to stream jsOut on the servers of c.
type jsWordcount struct {
	*wordcountSetup
	c  *natstest.Cluster
	js jetstream.JetStream
	// published are the texts published to jsIn so far, each a file under dir/published,
	// for wordcheck.Expected.
	published int
}

// jsOptions shape the streams of a jsWordcount.
type jsOptions struct {
	replicas   int           // of both streams (0: 1)
	duplicates time.Duration // the output stream's duplicate window (0: the server's default)
	maxMsgs    int64         // the input stream's max messages (0: no limit)
}

// newJSWordcount creates the streams on c, writes a text of size bytes (wordcheck's) and
// the configuration of a bounded word count from jsIn to jsOut with extra keys; it
// publishes nothing (publish does).
func newJSWordcount(t *testing.T, c *natstest.Cluster, size, rate int, o jsOptions, extra map[string]any) *jsWordcount {
	t.Helper()
	s := newWordcount(t, "hashmap", "filesystem", size, rate, nil)
	s.edit(t, map[string]any{"job.input": nil, "job.output": nil})
	keys := map[string]any{
		"job.source":                    "jetstream",
		"job.sink":                      "jetstream",
		"nats.servers":                  c.URL(),
		"source.jetstream.stream":       jsIn,
		"source.jetstream.subjects":     jsInPrefix + ".>",
		"source.jetstream.bounded":      true,
		"sink.jetstream.stream":         jsOut,
		"sink.jetstream.subject":        jsOutSubject,
		"sink.jetstream.marker-subject": jsMarkers,
	}
	for k, v := range extra {
		keys[k] = v
	}
	for k, v := range keys {
		if _, ok := s.conf[k]; ok {
			s.edit(t, map[string]any{k: v})
			delete(keys, k)
		}
	}
	s.add(t, keys)
	j := &jsWordcount{wordcountSetup: s, c: c, js: c.JetStream(t)}
	replicas := max(o.replicas, 1)
	natstest.CreateStream(t, j.js, jetstream.StreamConfig{Name: jsIn, Subjects: []string{jsInPrefix + ".>"}, Replicas: replicas, MaxMsgs: orNoLimit(o.maxMsgs)})
	natstest.CreateStream(t, j.js, jetstream.StreamConfig{Name: jsOut, Subjects: []string{jsOutSubject, jsMarkers + ".>"}, Replicas: replicas,
		AllowAtomicPublish: true, Duplicates: o.duplicates})
	return j
}

func orNoLimit(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// publish publishes text to jsIn, one message per line over the partition subjects, and
// keeps it for the expected counts when counted is true; it returns the messages.
func (j *jsWordcount) publish(t *testing.T, text string, counted bool) []natstest.Message {
	t.Helper()
	msgs := natstest.PublishText(t, j.js, jsInPrefix, jsPartitions, text)
	if counted {
		j.count(t, text)
	}
	return msgs
}

// count adds text to what the output must count.
func (j *jsWordcount) count(t *testing.T, text string) {
	t.Helper()
	dir := filepath.Join(j.dir, "published")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	j.published++
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d.txt", j.published)), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// publishInput publishes the text newWordcount wrote, counted.
func (j *jsWordcount) publishInput(t *testing.T) {
	t.Helper()
	j.publish(t, mustRead(t, j.input), true)
}

// checkOutput reads jsOut's records back and checks them against the counts of what was
// published and counted, computed by wordcheck from the texts: for every word its running
// counts 1..N, each once (nothing lost, nothing doubled).
func (j *jsWordcount) checkOutput(t *testing.T, logs string) {
	t.Helper()
	want, err := wordcheck.Expected(filepath.Join(j.dir, "published"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, m := range natstest.ReadAll(t, j.js, jsOut, "out.>") {
		b.Write(m.Data)
		b.WriteByte('\n')
	}
	got := filepath.Join(j.dir, "got")
	if err := os.MkdirAll(got, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(got, "records"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := wordcheck.Check(want, got); err != nil {
		t.Fatalf("stream %s: %v\nrunner output:\n%s", jsOut, err, tail(logs, 40))
	}
}

// finish waits for r to end well and checks the output.
func (j *jsWordcount) finish(t *testing.T, r *runner, within time.Duration) {
	t.Helper()
	if err := r.wait(t, within); err != nil {
		t.Fatalf("runner: %v\n%s", err, tail(r.out.String(), 40))
	}
	j.checkOutput(t, r.out.String())
}

// fails waits for r to fail and checks that its output holds every one of wants.
func fails(t *testing.T, r *runner, within time.Duration, wants ...string) string {
	t.Helper()
	if err := r.wait(t, within); err == nil {
		t.Fatalf("the runner succeeded; want a failure naming %q\n%s", wants, tail(r.out.String(), 30))
	}
	out := r.out.String()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Fatalf("the runner's failure does not name %q:\n%s", w, tail(out, 30))
		}
	}
	return out
}

// oneAndThree are the servers of the tests run on both: a single node, and a cluster of
// three with R3 streams.
var oneAndThree = []struct {
	name  string
	nodes int
}{{"single", 1}, {"cluster", 3}}

// startNodes starts a single server (n 1) or a cluster of n nodes.
func startNodes(t *testing.T, n int) *natstest.Cluster {
	t.Helper()
	if n == 1 {
		return natstest.StartServer(t, natstest.Options{})
	}
	return natstest.StartCluster(t, n, natstest.Options{})
}

// TestJetStreamWordCount runs the word count from stream to stream, on a single node and
// on a 3-node cluster with R3 streams, and checks the output is exact.
func TestJetStreamWordCount(t *testing.T) {
	t.Parallel()
	for _, tc := range oneAndThree {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := startNodes(t, tc.nodes)
			j := newJSWordcount(t, c, 20000, 0, jsOptions{replicas: tc.nodes}, nil)
			j.publishInput(t)
			j.finish(t, j.run(t), time.Minute)
		})
	}
}

// TestJetStreamServerDownAtStart starts the job with its server down: the error names the
// server's URL; with too few restart attempts the run fails naming it, with enough the run
// succeeds once the server is back.
func TestJetStreamServerDownAtStart(t *testing.T) {
	t.Parallel()
	t.Run("attempts-exhausted", func(t *testing.T) {
		t.Parallel()
		c := natstest.StartServer(t, natstest.Options{})
		j := newJSWordcount(t, c, 2000, 0, jsOptions{}, map[string]any{"restart-strategy.fixed-delay.attempts": 2})
		c.Node(0).Kill()
		out := fails(t, j.run(t), time.Minute, c.Node(0).URL())
		if n := strings.Count(out, c.Node(0).URL()); n < 2 {
			t.Fatalf("the URL is named %d times; want an error per attempt:\n%s", n, tail(out, 30))
		}
	})
	t.Run("retried", func(t *testing.T) {
		t.Parallel()
		c := natstest.StartServer(t, natstest.Options{})
		j := newJSWordcount(t, c, 2000, 0, jsOptions{}, map[string]any{
			"restart-strategy.fixed-delay.attempts": 200, "restart-strategy.fixed-delay.delay": "100ms"})
		j.publishInput(t)
		nd := c.Node(0)
		nd.Kill()
		r := j.run(t)
		waitOutput(t, r, nd.URL(), time.Minute)
		nd.Restart()
		j.finish(t, r, time.Minute)
	})
}

// TestJetStreamServerKilled kills the server with kill -9 mid-run, the single node (then
// restarted on its store) or one node of a 3-node cluster: the job goes on or restarts, and
// its output is exact.
func TestJetStreamServerKilled(t *testing.T) {
	t.Parallel()
	for _, tc := range oneAndThree {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := startNodes(t, tc.nodes)
			j := newJSWordcount(t, c, 10000, 40, jsOptions{replicas: tc.nodes}, map[string]any{
				"restart-strategy.fixed-delay.attempts": 200, "restart-strategy.fixed-delay.delay": "100ms"})
			j.publishInput(t)
			r := j.run(t)
			waitMatch(t, r, checkpointLine, time.Minute)
			victim := c.Node(0)
			victim.Kill()
			if tc.nodes == 1 {
				victim.Restart()
			} else {
				// The test's own connection may be the killed node's, reconnecting: the
				// output is read through a fresh one to a node that lives (once, a read on
				// the old one got no message within 30 s).
				js, err := jetstream.New(c.Node(1).Connect(t))
				if err != nil {
					t.Fatal(err)
				}
				j.js = js
			}
			j.finish(t, r, 2*time.Minute)
		})
	}
}

// TestJetStreamRunnerKilledBeforeCommit kills the runner right after a checkpoint
// completed, before its sink commits it, with the output stream's duplicate window 1 s and
// the resume after 3 s: the marker chain, not the window, keeps every record once.
func TestJetStreamRunnerKilledBeforeCommit(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	j := newJSWordcount(t, c, 10000, 40, jsOptions{duplicates: time.Second}, nil)
	j.publishInput(t)
	// The sink commits a few milliseconds after the line: the kill may come too late for
	// every writer. Then the job is resumed and killed again at its next checkpoint, up to
	// 25 times, until a writer is caught with a completed checkpoint not committed (on a
	// fast machine five tries once all came too late; a try takes about 0.2 s).
	var killed time.Time
	for try := 1; ; try++ {
		var id int
		killed = time.Time{}
		args := []string{"run", "--config", j.config, "--plugin-dir", testbin.PluginDir(t)}
		if try > 1 {
			args = append(args, "--from", "latest")
		}
		r := startWatched(t, func(r *runner, out string) {
			if m := checkpointLine.FindStringSubmatch(out); m != nil && killed.IsZero() {
				r.cmd.Process.Kill() // at once, in the goroutine that read the line
				killed = time.Now()
				id, _ = strconv.Atoi(m[1])
			}
		}, testbin.Runner(t), args...)
		<-r.done
		if killed.IsZero() {
			t.Fatalf("the runner ended before a checkpoint completed: %v\n%s", r.err, tail(r.out.String(), 30))
		}
		behind := writersBehind(t, j.js, int64(id))
		t.Logf("try %d: killed the runner as checkpoint %d completed; writers whose commit of it had not got through: %v", try, id, behind)
		if len(behind) > 0 {
			break
		}
		if try == 25 {
			t.Fatalf("in %d tries, every writer had committed before the kill", try)
		}
	}
	// Not a synchronization: the resume must come after the output stream's duplicate
	// window has passed, so that only the marker chain can recognise a redone commit.
	time.Sleep(time.Until(killed.Add(3 * time.Second)))
	j.finish(t, j.runWhenFree(t, "--from", "latest"), 2*time.Minute)
}

// TestJetStreamCommittedOutputIsNotPublishedAgain: a second runner of the job with its own
// checkpoint directory, started once the first has committed, would publish the first's
// output again; then, after the job finished, a run --from its oldest checkpoint would
// publish every later checkpoint's output again. Each is refused once (no restart), naming
// the marker subject and the checkpoints, before it publishes anything, and the output
// stays exact (the first runner unharmed).
func TestJetStreamCommittedOutputIsNotPublishedAgain(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	j := newJSWordcount(t, c, 10000, 40, jsOptions{}, nil)
	j.publishInput(t)
	r := j.run(t, "-D", "execution.checkpointing.num-retained=100")
	waitFor(t, r, "a commit in "+jsOut, time.Minute, func(string) error {
		if n := len(natstest.ReadAll(t, j.js, jsOut, "out.>")); n == 0 {
			return fmt.Errorf("no record committed yet")
		}
		return nil
	})
	once := func(r *runner, wants ...string) {
		t.Helper()
		out := fails(t, r, time.Minute, append(wants, jsMarkers+".wc.")...)
		if strings.Contains(out, "job failed; recovering") {
			t.Fatalf("the refusal was retried by the restart strategy; want it once:\n%s", tail(out, 30))
		}
	}
	second := j.run(t, "-D", "execution.checkpointing.dir="+filepath.Join(j.dir, "other-checkpoints"))
	once(second, "but this run restores no checkpoint", "execution.checkpointing.dir")
	j.finish(t, r, time.Minute)

	chks, err := filepath.Glob(filepath.Join(j.dir, "checkpoints", "wc", "chk-*"))
	if err != nil || len(chks) < 2 {
		t.Fatalf("checkpoints of the finished job: %v, %v; want at least two", chks, err)
	}
	oldest, first := "", int64(0)
	for _, chk := range chks {
		if id, err := strconv.ParseInt(strings.TrimPrefix(filepath.Base(chk), "chk-"), 10, 64); err == nil && (first == 0 || id < first) {
			oldest, first = chk, id
		}
	}
	once(j.run(t, "--from", oldest), fmt.Sprintf("after checkpoint %d being restored", first), "--from latest")
	j.checkOutput(t, r.out.String())
}

// writersBehind returns the marker subjects of jsOut whose last marker is of a checkpoint
// before id: writers that had not committed checkpoint id.
func writersBehind(t *testing.T, js jetstream.JetStream, id int64) []string {
	t.Helper()
	last := map[string]int64{}
	for _, m := range natstest.ReadAll(t, js, jsOut, jsMarkers+".>") {
		var mk struct{ Checkpoint int64 }
		if err := json.Unmarshal(m.Data, &mk); err != nil {
			t.Fatalf("marker %d on %s: %v: %q", m.Sequence, m.Subject, err, m.Data)
		}
		last[m.Subject] = mk.Checkpoint
	}
	if len(last) == 0 {
		t.Fatalf("no marker in %s", jsOut)
	}
	var behind []string
	for subj, c := range last {
		if c < id {
			behind = append(behind, subj)
		}
	}
	return behind
}

// TestJetStreamStreamMissing runs the job against a server without its input stream: the
// error names the stream and the server.
func TestJetStreamStreamMissing(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	j := newJSWordcount(t, c, 2000, 0, jsOptions{}, map[string]any{"restart-strategy.fixed-delay.attempts": 1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := j.js.DeleteStream(ctx, jsIn); err != nil {
		t.Fatal(err)
	}
	fails(t, j.run(t), time.Minute, fmt.Sprintf("stream %q not found on %s", jsIn, c.Node(0).URL()))
}

// TestJetStreamRetentionGap resumes a job after the input stream's max messages dropped
// messages its checkpoint had not read: refused by name, unless on-retention-gap is skip,
// which reads on from the stream's first message.
func TestJetStreamRetentionGap(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	const keep = 40
	j := newJSWordcount(t, c, 1000, 0, jsOptions{maxMsgs: keep}, map[string]any{
		"source.jetstream.bounded": false, "restart-strategy.fixed-delay.attempts": 1})
	first := j.publish(t, mustRead(t, j.input), true)
	if len(first) >= keep {
		t.Fatalf("the first text has %d lines; the test needs fewer than the stream keeps (%d)", len(first), keep)
	}
	r := j.run(t)
	// The first text read and committed: as many records as its words.
	want, err := wordcheck.Expected(j.input)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, "the first text's records in "+jsOut, time.Minute, func(string) error {
		if got, n := len(natstest.ReadAll(t, j.js, jsOut, "out.>")), total(want); int64(got) != n {
			return fmt.Errorf("%d of %d records", got, n)
		}
		return nil
	})
	r.cmd.Process.Kill()
	<-r.done
	// More than the stream keeps: the first text's messages, and the start of this one, go.
	more := filepath.Join(j.dir, "more.txt")
	if err := wordcheck.WriteText(more, 6000, 300, 11); err != nil {
		t.Fatal(err)
	}
	j.publish(t, mustRead(t, more), false)
	kept := natstest.ReadAll(t, j.js, jsIn)
	if len(kept) != keep {
		t.Fatalf("stream %s keeps %d messages, want %d", jsIn, len(kept), keep)
	}
	refused := j.runWhenFree(t, "--from", "latest", "-D", "source.jetstream.bounded=true")
	fails(t, refused, time.Minute, fmt.Sprintf("stream %q now starts at sequence %d", jsIn, kept[0].Sequence), "source.jetstream.on-retention-gap")

	var text strings.Builder
	for _, m := range kept {
		text.Write(m.Data)
		text.WriteByte('\n')
	}
	j.count(t, text.String())
	r = j.runWhenFree(t, "--from", "latest", "-D", "source.jetstream.bounded=true", "-D", "source.jetstream.on-retention-gap=skip")
	j.finish(t, r, time.Minute)
	if want := "skips messages the stream's retention dropped: stream=" + jsIn; !strings.Contains(r.out.String(), want) {
		t.Fatalf("the skipped gap is not logged (%q):\n%s", want, tail(r.out.String(), 30))
	}
}

// TestJetStreamUndecodableMessage publishes a line that is not UTF-8: the job fails naming
// the stream and the message's sequence by default, and skips and counts it with
// on-decode-error skip.
func TestJetStreamUndecodableMessage(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	j := newJSWordcount(t, c, 2000, 0, jsOptions{}, map[string]any{"restart-strategy.fixed-delay.attempts": 3})
	j.publishInput(t)
	bad := j.publish(t, "caf\xe9 au lait\n", false)[0]
	j.publish(t, "after the bad one\n", true)
	fails(t, j.run(t), time.Minute, fmt.Sprintf("stream %q sequence %d (subject %q) does not decode", jsIn, bad.Sequence, bad.Subject), "source.jetstream.on-decode-error")
	if got := natstest.ReadAll(t, j.js, jsOut, "out.>"); len(got) != 0 {
		t.Logf("%d records committed before the failure", len(got))
	}

	// A fresh job (its own name, so its own markers) skips the message.
	j.edit(t, map[string]any{"job.name": "wc-skip"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := j.js.Stream(ctx, jsOut)
	if err == nil {
		err = out.Purge(ctx)
	}
	if err != nil {
		t.Fatalf("purge stream %s: %v", jsOut, err)
	}
	r := j.run(t, "-D", "source.jetstream.on-decode-error=skip")
	j.finish(t, r, time.Minute)
	for _, want := range []string{fmt.Sprintf("skips a message that does not decode: stream=%s sequence=%d", jsIn, bad.Sequence),
		fmt.Sprintf("input: stream %s, 1 messages skipped", jsIn)} {
		if !strings.Contains(r.out.String(), want) {
			t.Fatalf("the skip is not reported (%q):\n%s", want, tail(r.out.String(), 30))
		}
	}
}

// TestJetStreamRecordOverMaxPayload gives the sink a record over the server's max payload:
// the job fails with an error naming the subject and the size.
func TestJetStreamRecordOverMaxPayload(t *testing.T) {
	t.Parallel()
	const maxPayload = 1024
	c := natstest.StartServer(t, natstest.Options{MaxPayload: maxPayload})
	j := newJSWordcount(t, c, 2000, 0, jsOptions{}, nil)
	j.publishInput(t)
	word := strings.Repeat("x", maxPayload-24) // fits as input, not with a count and headers
	j.publish(t, word+"\n", false)
	fails(t, j.run(t), time.Minute, fmt.Sprintf("a record of %d bytes for subject %s is over the server's max payload of %d bytes", len(word)+2, jsOutSubject, maxPayload))
}

// TestJetStreamFrozenServer freezes the server (SIGSTOP) mid-run: the job notices within
// a deadline, with an error naming the server, and recovers once the server is thawed.
func TestJetStreamFrozenServer(t *testing.T) {
	t.Parallel()
	c := natstest.StartServer(t, natstest.Options{})
	j := newJSWordcount(t, c, 10000, 40, jsOptions{}, map[string]any{
		"nats.connect-timeout": "2s", "restart-strategy.fixed-delay.attempts": 200, "restart-strategy.fixed-delay.delay": "100ms"})
	j.publishInput(t)
	r := j.run(t)
	waitMatch(t, r, checkpointLine, time.Minute)
	nd := c.Node(0)
	before := len(r.out.String())
	nd.Stop()
	frozen := time.Now()
	// nats.connect-timeout 2s: a commit (2 s) and its look at the last marker (2 s), or the
	// pings (about 6 s), and a margin for a busy machine.
	waitFor(t, r, "an error naming the frozen server", 15*time.Second, func(out string) error {
		for _, line := range strings.Split(out[before:], "\n") {
			if strings.Contains(line, nd.URL()) && (strings.Contains(line, "ERROR") || strings.Contains(line, "WARN")) {
				t.Logf("the freeze noticed: %s", line)
				return nil
			}
		}
		return fmt.Errorf("none since the freeze: %s", tail(out[before:], 5))
	})
	t.Logf("noticed %s after the freeze", time.Since(frozen).Round(time.Millisecond))
	nd.Cont()
	j.finish(t, r, 2*time.Minute)
}

// TestJetStreamExampleScript runs examples/jetstream/run.sh as a newcomer would (its own
// server, streams, the word count killed with kill -9 and resumed) with its directory in
// the test's, and checks the counts it prints, read back from the output stream, against
// the words of its input ten times over, counted here by wordcheck.
func TestJetStreamExampleScript(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("examples/jetstream/run.sh")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "FLOWSTATE_EXAMPLE_DIR="+dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run.sh: %v\n%s\n%s", err, tail(stderr.String(), 30), tail(stdout.String(), 10))
		}
	case <-time.After(3 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("run.sh did not end within 3 minutes\n%s", tail(stderr.String(), 30))
	}
	for _, step := range []string{"killed the runner", "resumed from the latest checkpoint"} {
		if !strings.Contains(stderr.String(), step) {
			t.Fatalf("run.sh did not say %q:\n%s", step, tail(stderr.String(), 30))
		}
	}
	if !checkpointLine.MatchString(mustRead(t, filepath.Join(dir, "run1.log"))) {
		t.Fatalf("the first run was killed before a checkpoint completed:\n%s", tail(mustRead(t, filepath.Join(dir, "run1.log")), 20))
	}
	once, err := wordcheck.Expected("../../examples/wordcount/input/flip-142.txt")
	if err != nil {
		t.Fatal(err)
	}
	const repeat = 10 // run.sh publishes its input ten times over
	printed := map[string]int64{}
	var verdict string
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if strings.HasPrefix(line, "exact: ") {
			verdict = line
			continue
		}
		w, n, ok := strings.Cut(line, "\t")
		if !ok {
			continue // what the streams program says of creating and publishing
		}
		c, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			t.Fatalf("run.sh printed %q, not word<TAB>count", line)
		}
		printed[w] = c
	}
	var words int64
	for w, n := range once {
		words += n * repeat
		if printed[w] != n*repeat {
			t.Errorf("%q: run.sh printed %d, the input holds it %d times", w, printed[w], n*repeat)
		}
	}
	if len(printed) != len(once) {
		t.Errorf("run.sh printed %d words, the input has %d distinct", len(printed), len(once))
	}
	if want := fmt.Sprintf("exact: %d output messages for the %d words of the input, %d distinct", words, words, len(once)); !strings.HasPrefix(verdict, want) {
		t.Errorf("run.sh's verdict %q, want %q", verdict, want)
	}
}

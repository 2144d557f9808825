package jetstream

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/restart"
)

// outStream is the sink's stream of the tests: records on out.>, markers on the default
// prefix, probes (see waitPastDuplicateWindow) on probe.
func outStream(t *testing.T, ts *testServer, window time.Duration) {
	ts.stream(t, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>", DefaultMarkerPrefix + ".>", "probe"},
		AllowAtomicPublish: true, Duplicates: window})
}

func newSink(ts *testServer) *Sink {
	return &Sink{Conn: ts.conn(), Stream: "OUT", Subject: "out.words", Job: "wc"}
}

func openSink(t *testing.T, s *Sink, subtask, p int, state []byte) dataflow.SinkWriter {
	t.Helper()
	w, err := s.Open(context.Background(), subtask, p, state)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func write(t *testing.T, w dataflow.SinkWriter, recs ...string) {
	t.Helper()
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
}

// commit commits w's transactions up to checkpoint id and waits until they are visible,
// as the run does when a subtask's input ends.
func commit(w dataflow.SinkWriter, id int64) error {
	if err := w.Commit(id); err != nil {
		return err
	}
	return w.(dataflow.Flusher).Flush()
}

func records(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

// payloadsOf returns the payloads of the stored messages.
func payloadsOf(ms []stored) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Data
	}
	return out
}

// exactly fails t unless the output stream holds each of want once, in order.
func exactly(t *testing.T, ts *testServer, want []string) {
	t.Helper()
	if got := payloadsOf(ts.read(t, "OUT", "out.")); !slices.Equal(got, want) {
		t.Fatalf("the stream holds %d records %.300q, want %d %.300q", len(got), got, len(want), want)
	}
}

// waitPastDuplicateWindow returns once the stream's duplicate window has passed: a probe
// published with a message id at the start is taken again, not as a duplicate.
func waitPastDuplicateWindow(t *testing.T, ts *testServer) {
	t.Helper()
	ctx := context.Background()
	id := fmt.Sprintf("probe-%d", time.Now().UnixNano())
	if _, err := ts.js.Publish(ctx, "probe", nil, jetstream.WithMsgID(id)); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the duplicate window to pass", 30*time.Second, func() error {
		ack, err := ts.js.Publish(ctx, "probe", nil, jetstream.WithMsgID(id))
		if err != nil {
			return err
		}
		if ack.Duplicate {
			return fmt.Errorf("still a duplicate")
		}
		return nil
	})
}

func TestSinkCommitsWhenTheCheckpointCompletes(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	w := openSink(t, newSink(ts), 0, 1, nil)
	write(t, w, records("a", 5)...)
	if _, err := w.PreCommit(1); err != nil {
		t.Fatal(err)
	}
	write(t, w, records("b", 3)...)
	exactly(t, ts, nil)
	if err := commit(w, 1); err != nil {
		t.Fatal(err)
	}
	exactly(t, ts, records("a", 5))
	if _, err := w.PreCommit(2); err != nil {
		t.Fatal(err)
	}
	if err := commit(w, 2); err != nil {
		t.Fatal(err)
	}
	exactly(t, ts, append(records("a", 5), records("b", 3)...))
	markers := ts.read(t, "OUT", DefaultMarkerPrefix+".wc.0")
	if len(markers) != 3 { // open, checkpoint 1, checkpoint 2
		t.Fatalf("markers %v, want an open marker and two commits", markers)
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(markers[2].Data), &last); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"job": "wc", "subtask": 0.0, "checkpoint": 2.0, "part": 1.0, "parts": 1.0, "owner": 1.0, "kind": "commit"} {
		if last[k] != v {
			t.Errorf("last marker %s: %v is %v, want %v", markers[2].Data, k, last[k], v)
		}
	}
}

// TestSinkRecommitAfterRestoreIsRecognisedPastTheDuplicateWindow: a writer commits a
// checkpoint and "crashes" before the runner learns of it; its restore, past the stream's
// 1 s duplicate window, commits the same transaction again, and the marker chain, not the
// window, shows it done. A transaction pre-committed but never committed is committed by
// the restore, once.
func TestSinkRecommitAfterRestoreIsRecognisedPastTheDuplicateWindow(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, time.Second)
	s := newSink(ts)
	w := openSink(t, s, 0, 1, nil)
	write(t, w, records("a", 4)...)
	st1, err := w.PreCommit(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := commit(w, 1); err != nil {
		t.Fatal(err)
	}
	write(t, w, records("b", 2)...)
	st2, err := w.PreCommit(2)
	if err != nil {
		t.Fatal(err)
	}
	w.Close() // checkpoint 2 completed, but the writer died before committing it
	waitPastDuplicateWindow(t, ts)
	openSink(t, s, 0, 1, st1).Close() // restore checkpoint 1: committed already
	exactly(t, ts, records("a", 4))
	openSink(t, s, 0, 1, st2).Close() // restore checkpoint 2: its transaction is committed now
	want := append(records("a", 4), records("b", 2)...)
	exactly(t, ts, want)
	openSink(t, s, 0, 1, st2).Close() // and once only
	exactly(t, ts, want)
}

// TestSinkCommitsInPartsAndResumesAfterTheLastDonePart: a transaction over the batch size
// goes in parts of at most BatchSize messages (marker included); a writer that fails after
// two parts is restored, and the restore commits the other parts only.
func TestSinkCommitsInPartsAndResumesAfterTheLastDonePart(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, time.Second)
	s := newSink(ts)
	s.BatchSize = 10
	s.failAfterParts = 2
	w := openSink(t, s, 0, 1, nil)
	recs := records("r", 35) // 9 records and a marker per batch: 4 parts
	write(t, w, recs...)
	st, err := w.PreCommit(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := commit(w, 1); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("commit: %v, want the injected failure", err)
	}
	exactly(t, ts, recs[:18])
	w.Close()
	s.failAfterParts = 0
	waitPastDuplicateWindow(t, ts)
	openSink(t, s, 0, 1, st).Close()
	exactly(t, ts, recs)
	// Every batch held at most BatchSize messages: between two markers of the chain, at
	// most 9 records.
	all := ts.read(t, "OUT", "")
	n := 0
	for _, m := range all {
		switch {
		case strings.HasPrefix(m.Subject, "out."):
			if n++; n > 9 {
				t.Fatalf("more than 9 records between two markers: %v", all)
			}
		case strings.HasPrefix(m.Subject, DefaultMarkerPrefix):
			n = 0
		}
	}
}

// TestSinkRefusesTheCommitOfAZombieWriter: once a newer writer opened the chain (a new run
// that restored the checkpoint), the old writer's commits are refused, as fenced, and none
// of their records shows.
func TestSinkRefusesTheCommitOfAZombieWriter(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	s := newSink(ts)
	zombie := openSink(t, s, 0, 1, nil)
	write(t, zombie, records("a", 3)...)
	st, err := zombie.PreCommit(1)
	if err != nil {
		t.Fatal(err)
	}
	openSink(t, s, 0, 1, st) // the new owner restores checkpoint 1 and commits it
	exactly(t, ts, records("a", 3))
	write(t, zombie, records("z", 3)...)
	if _, err := zombie.PreCommit(2); err != nil {
		t.Fatal(err)
	}
	err = commit(zombie, 2)
	if err == nil || !strings.Contains(err.Error(), "fenced") || !restart.IsPermanent(err) {
		t.Fatalf("zombie commit: %v, want a permanent fencing error", err)
	}
	exactly(t, ts, records("a", 3))
}

// TestSinkRedistributesPendingTransactionsAndFencesOldChains: two writers pre-commit and
// die; restored at parallelism 1, the one writer commits both transactions on their own
// chains and fences both, so the old writer 1 can commit nothing.
func TestSinkRedistributesPendingTransactionsAndFencesOldChains(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	s := newSink(ts)
	old := make([]dataflow.SinkWriter, 2)
	states := make([][]byte, 2)
	for i := range old {
		old[i] = openSink(t, s, i, 2, nil)
		write(t, old[i], records(fmt.Sprint("w", i), 3)...)
		var err error
		if states[i], err = old[i].PreCommit(1); err != nil {
			t.Fatal(err)
		}
	}
	shares, err := s.Redistribute(states, 1)
	if err != nil {
		t.Fatal(err)
	}
	openSink(t, s, 0, 1, shares[0])
	got := payloadsOf(ts.read(t, "OUT", "out."))
	slices.Sort(got)
	if want := append(records("w0", 3), records("w1", 3)...); !slices.Equal(got, want) {
		t.Fatalf("after the restore at parallelism 1: %q, want %q", got, want)
	}
	if err := commit(old[1], 1); err == nil || !strings.Contains(err.Error(), "fenced") {
		t.Fatalf("old writer 1's commit: %v, want it fenced", err)
	}
	if n := len(ts.read(t, "OUT", "out.")); n != 6 {
		t.Fatalf("%d records after the zombie's commit, want 6", n)
	}
	back, err := s.Redistribute(shares, 3)
	if err != nil || len(back) != 3 {
		t.Fatalf("redistribute to 3: %v", err)
	}
}

// refused fails t unless opening s's writer of subtask (of p) with state is refused for
// good, with an error that says each of wants.
func refused(t *testing.T, s *Sink, subtask, p int, state []byte, wants ...string) {
	t.Helper()
	w, err := s.Open(context.Background(), subtask, p, state)
	if err == nil {
		w.Close()
		t.Fatalf("the writer of subtask %d opened; want a refusal naming %q", subtask, wants)
	}
	if !restart.IsPermanent(err) {
		t.Errorf("the refusal is not permanent (a restart would try again): %v", err)
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
}

// TestSinkRefusesAFreshWriterOnACommittedChain: a second runner of the job with its own
// checkpoint directory (a writer that restores no state) opens on a chain whose writer has
// committed: it is refused for good, naming the marker subject, before it publishes
// anything, at parallelism 2 also the subtask whose own chain shows nothing committed, and
// the first writer goes on committing; the output holds each record once. A
// fresh writer on a chain with nothing committed yet (an attempt that failed before its
// first checkpoint completed) takes it over.
func TestSinkRefusesAFreshWriterOnACommittedChain(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	s := newSink(ts)
	openSink(t, s, 0, 1, nil).Close() // nothing committed: the next fresh writer may open
	first := openSink(t, s, 0, 1, nil)
	write(t, first, records("a", 3)...)
	if _, err := first.PreCommit(1); err != nil {
		t.Fatal(err)
	}
	if err := commit(first, 1); err != nil {
		t.Fatal(err)
	}
	markers := len(ts.read(t, "OUT", DefaultMarkerPrefix+"."))
	refused(t, s, 0, 1, nil, DefaultMarkerPrefix+".wc.0", `stream "OUT"`, "checkpoint 1", "restores no checkpoint", "execution.checkpointing.dir")
	if n := len(ts.read(t, "OUT", DefaultMarkerPrefix+".")); n != markers {
		t.Fatalf("the refused writer published: %d markers, %d before", n, markers)
	}
	// At parallelism 2, the second run's subtask 1, whose own chain shows nothing
	// committed, is refused for its sibling's chain, and fences nothing of the first run.
	refused(t, s, 1, 2, nil, DefaultMarkerPrefix+".wc.0", "restores no checkpoint")
	if n := len(ts.read(t, "OUT", DefaultMarkerPrefix+".")); n != markers {
		t.Fatalf("the refused writers published: %d markers, %d before", n, markers)
	}
	write(t, first, records("b", 2)...)
	if _, err := first.PreCommit(2); err != nil {
		t.Fatal(err)
	}
	if err := commit(first, 2); err != nil {
		t.Fatalf("the first writer, after the second was refused: %v", err)
	}
	exactly(t, ts, append(records("a", 3), records("b", 2)...))
}

// TestSinkRefusesARestoreOlderThanTheLastCommit: checkpoints 1 and 2 are committed; a
// restore of checkpoint 1 (--from an older checkpoint) would publish checkpoint 2's output
// again, so it is refused for good, naming both checkpoints, at its own parallelism and
// redistributed to another; a restore of checkpoint 2 opens, and the output is exact.
func TestSinkRefusesARestoreOlderThanTheLastCommit(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	s := newSink(ts)
	w := openSink(t, s, 0, 1, nil)
	var states [][]byte
	for cp := int64(1); cp <= 2; cp++ {
		write(t, w, records(fmt.Sprint("c", cp), 2)...)
		st, err := w.PreCommit(cp)
		if err != nil {
			t.Fatal(err)
		}
		if err := commit(w, cp); err != nil {
			t.Fatal(err)
		}
		states = append(states, st)
	}
	w.Close()
	refused(t, s, 0, 1, states[0], DefaultMarkerPrefix+".wc.0", "checkpoint 2", "after checkpoint 1 being restored")
	shares, err := s.Redistribute(states[:1], 2)
	if err != nil {
		t.Fatal(err)
	}
	refused(t, s, 0, 2, shares[0], "checkpoint 2", "after checkpoint 1 being restored")
	openSink(t, s, 0, 1, states[1]).Close()
	exactly(t, ts, append(records("c1", 2), records("c2", 2)...))
}

// keyed is a record with a key.
type keyed struct{ key, text string }

func (k keyed) Key() string    { return k.key }
func (k keyed) String() string { return k.text }

func TestSinkSubjectTemplateTakesTheRecordKey(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	s := newSink(ts)
	s.Subject = "out.count.{key}"
	w := openSink(t, s, 0, 1, nil)
	for _, r := range []keyed{{"apple", "apple 1"}, {"pear", "pear 1"}, {"apple", "apple 2"}, {"a.b", "nested"}} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	err := w.Write(keyed{"two words", "x"})
	if err == nil || !strings.Contains(err.Error(), `"two words"`) || !strings.Contains(err.Error(), "out.count.{key}") {
		t.Fatalf("a key that makes no subject: %v, want an error naming the key and the template", err)
	}
	w.PreCommit(1)
	if err := commit(w, 1); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ts.read(t, "OUT", "out.") {
		got = append(got, m.Subject+"="+m.Data)
	}
	want := []string{"out.count.apple=apple 1", "out.count.pear=pear 1", "out.count.apple=apple 2", "out.count.a.b=nested"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestSinkRefusesARecordOverTheMaxPayload(t *testing.T) {
	ts := startServer(t, func(o *server.Options) { o.MaxPayload = 4096 })
	outStream(t, ts, 0)
	w := openSink(t, newSink(ts), 0, 1, nil)
	write(t, w, strings.Repeat("x", 3000))
	err := w.Write(strings.Repeat("y", 5000))
	if err == nil || !strings.Contains(err.Error(), "5000 bytes") || !strings.Contains(err.Error(), "out.words") || !strings.Contains(err.Error(), "4096") {
		t.Fatalf("a record over the max payload: %v, want an error naming its subject and size", err)
	}
	if !restart.IsPermanent(err) {
		t.Fatalf("%v is not permanent", err)
	}
	w.PreCommit(1)
	if err := commit(w, 1); err != nil {
		t.Fatal(err)
	}
	exactly(t, ts, []string{strings.Repeat("x", 3000)})
}

func TestSinkChecksTheStream(t *testing.T) {
	ts := startServer(t)
	ts.stream(t, jetstream.StreamConfig{Name: "PLAIN", Subjects: []string{"plain.>", "flowstate.markers.>"}})
	ts.stream(t, jetstream.StreamConfig{Name: "NOMARK", Subjects: []string{"nm.>"}, AllowAtomicPublish: true})
	for _, c := range []struct {
		s    Sink
		want string
	}{
		{Sink{Stream: "PLAIN", Subject: "plain.x"}, "allow_atomic"},
		{Sink{Stream: "NOMARK", Subject: "nm.x"}, "marker subject flowstate.markers.wc.0"},
		{Sink{Stream: "NOMARK", Subject: "other.x", MarkerPrefix: "nm.m"}, "does not capture subject other.x"},
		{Sink{Stream: "MISSING", Subject: "x"}, `stream "MISSING" not found on ` + ts.ClientURL()},
		{Sink{Stream: "NOMARK", Subject: "nm.{id}"}, "the only placeholder is {key}"},
		{Sink{Stream: "NOMARK", Subject: "nm.x", BatchSize: 1}, "at least 2"},
	} {
		c.s.Conn, c.s.Job = ts.conn(), "wc"
		err := c.s.Preflight(context.Background())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("sink %+v: %v, want an error saying %q", c.s, err, c.want)
		}
	}
}

// TestSinkStateRoundTrips: the state holds records of any bytes, several transactions and
// the chains' sequences.
func TestSinkStateRoundTrips(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	s := newSink(ts)
	s.Subject = "out.{key}"
	w := openSink(t, s, 0, 1, nil)
	w.Write(keyed{"a", "\x00\xff binary"})
	w.Write(keyed{"b", ""})
	w.PreCommit(1)
	w.Write(keyed{"a", "second"})
	b, err := w.PreCommit(2)
	if err != nil {
		t.Fatal(err)
	}
	st, err := decodeSinkState(b)
	if err != nil {
		t.Fatal(err)
	}
	again, err := st.encode()
	if err != nil || string(again) != string(b) {
		t.Fatalf("re-encoded state differs (%v)", err)
	}
	if len(st.Txs) != 2 || st.Txs[0].Records != 2 || string(st.Txs[0].payload(0)) != "\x00\xff binary" || st.Txs[1].Subjects[0] != "out.a" {
		t.Fatalf("decoded %+v", st)
	}
	for _, bad := range [][]byte{nil, []byte("FSJS\x01"), b[:len(b)-1], append(slices.Clone(b), 0)} {
		if _, err := decodeSinkState(bad); err == nil {
			t.Errorf("state %q decoded", bad)
		}
	}
}

// TestSinkCommitsInTheBackground: Commit returns while its batches go out, the writer goes
// on writing and pre-committing, and Close waits for them; a state pre-committed while a
// commit was in flight restores to the output exactly once. A commit that fails in the
// background fails the next Commit, Flush and Close.
func TestSinkCommitsInTheBackground(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	s := newSink(ts)
	s.BatchSize = 10
	w, err := s.Open(context.Background(), 0, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := records("a", 95), records("b", 5)
	write(t, w, a...)
	if _, err := w.PreCommit(1); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(1); err != nil { // 11 batches in the background
		t.Fatal(err)
	}
	write(t, w, b...)
	st2, err := w.PreCommit(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close with a commit in flight: %v", err)
	}
	exactly(t, ts, a)
	openSink(t, s, 0, 1, st2).Close()
	exactly(t, ts, append(slices.Clone(a), b...))

	ts = startServer(t)
	outStream(t, ts, 0)
	s = newSink(ts)
	s.BatchSize = 10
	s.failAfterParts = 2
	w = openSink(t, s, 0, 1, nil)
	write(t, w, a...)
	if _, err := w.PreCommit(1); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(1); err != nil {
		t.Fatalf("commit: %v, want it in the background", err)
	}
	if err := w.Commit(2); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("the commit after a failed one: %v, want its failure", err)
	}
	if err := w.(dataflow.Flusher).Flush(); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("flush after a failed commit: %v, want its failure", err)
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("close after a failed commit: %v, want its failure", err)
	}
	exactly(t, ts, a[:18])
}

// TestSinkRefusesABatchOverTheServersLimitForGood: a batch size over the server's batch
// limit (1000 by default) fails the commit for good, naming the key and the server's
// setting, since no retry can change it; nothing of the batch shows.
func TestSinkRefusesABatchOverTheServersLimitForGood(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	s := newSink(ts)
	s.BatchSize = 2000
	s.Keys = &SinkKeys{BatchSize: "sink.jetstream.batch-size"}
	w := openSink(t, s, 0, 1, nil)
	write(t, w, records("r", 1500)...)
	if _, err := w.PreCommit(1); err != nil {
		t.Fatal(err)
	}
	err := commit(w, 1)
	if err == nil || !restart.IsPermanent(err) {
		t.Fatalf("commit of a batch of 1501 messages: %v (permanent: %v), want a permanent error", err, restart.IsPermanent(err))
	}
	for _, want := range []string{"sink.jetstream.batch-size", "max_msgs", "1501 messages"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	exactly(t, ts, nil)
}

// checkpointed pre-commits checkpoint id on w, commits it and waits for the commit; it
// returns the checkpoint's sink state.
func checkpointed(t *testing.T, w dataflow.SinkWriter, id int64) []byte {
	t.Helper()
	st, err := w.PreCommit(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := commit(w, id); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSinkIndependentWritersOpenOnTheirOwn: tasks start and restore on their own. Subtask 0
// has committed when subtask 1 opens for the first time: as an independent writer it opens
// (a run's subtask is refused there, see TestSinkRefusesAFreshWriterOnACommittedChain),
// fences nothing of subtask 0, which goes on committing, and both outputs land once. An
// independent writer refuses a state of another chain, and still refuses to open fresh on
// its own chain once that shows commits.
func TestSinkIndependentWritersOpenOnTheirOwn(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	s := newSink(ts)
	s.Independent = true
	w0 := openSink(t, s, 0, 2, nil)
	write(t, w0, records("a", 3)...)
	st0 := checkpointed(t, w0, 1)
	w1 := openSink(t, s, 1, 2, nil)
	write(t, w1, records("b", 2)...)
	checkpointed(t, w1, 1)
	write(t, w0, records("c", 2)...)
	if _, err := w0.PreCommit(2); err != nil {
		t.Fatal(err)
	}
	if err := commit(w0, 2); err != nil {
		t.Fatalf("subtask 0 after subtask 1 opened: %v", err)
	}
	exactly(t, ts, slices.Concat(records("a", 3), records("b", 2), records("c", 2)))
	refused(t, s, 1, 2, st0, "transactions of marker chain "+DefaultMarkerPrefix+".wc.0", "another task's state")
	refused(t, s, 1, 2, nil, DefaultMarkerPrefix+".wc.1", "restores no checkpoint")
}

// TestSinkRecordsTheLeaseEpoch: the markers of a writer whose task is held at lease epoch 5
// say so; a writer of epoch 4 (a runner that lost the task) is refused before it
// publishes, and one of epoch 6 takes the chain over.
func TestSinkRecordsTheLeaseEpoch(t *testing.T) {
	ts := startServer(t)
	outStream(t, ts, 0)
	s := newSink(ts)
	s.Independent = true
	s.Epoch = func() int64 { return 5 }
	w := openSink(t, s, 0, 1, nil)
	write(t, w, records("a", 2)...)
	st := checkpointed(t, w, 1)
	markers := ts.read(t, "OUT", DefaultMarkerPrefix+".wc.0")
	for _, m := range markers {
		var mk map[string]any
		if err := json.Unmarshal([]byte(m.Data), &mk); err != nil {
			t.Fatal(err)
		}
		if mk["lease"] != 5.0 {
			t.Fatalf("marker %s: lease %v, want 5", m.Data, mk["lease"])
		}
	}
	older := *s
	older.Epoch = func() int64 { return 4 }
	refused(t, &older, 0, 1, st, "fenced", "lease epoch 5", "epoch 4")
	if n := len(ts.read(t, "OUT", DefaultMarkerPrefix+".wc.0")); n != len(markers) {
		t.Fatalf("the refused writer published: %d markers, %d before", n, len(markers))
	}
	newer := *s
	newer.Epoch = func() int64 { return 6 }
	openSink(t, &newer, 0, 1, st).Close()
	write(t, w, records("z", 2)...)
	if _, err := w.PreCommit(2); err != nil {
		t.Fatal(err)
	}
	if err := commit(w, 2); err == nil || !strings.Contains(err.Error(), "fenced") {
		t.Fatalf("the epoch 5 writer after epoch 6 opened: %v, want it fenced", err)
	}
	exactly(t, ts, records("a", 2))
}

package dataflow_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/state"
)

// seqRec is record seq of source subtask src.
type seqRec struct {
	Src, Seq int
	Key      string
}

func keyOf(src, seq int) string { return "k" + strconv.Itoa((seq*7+src)%100) }

// runAheadSource has two subtasks. Subtask 0 reads half its input before its first
// barrier; once that barrier has been sent (its position taken) it reads on, and subtask 1, which holds back its first
// read until then, sends its own first barrier only after subtask 0 ran ahead: after
// one read past the barrier (the records are emitted, but exactly-once mode keeps them
// from being sent), or, with afterSend, once those records were sent and the next read
// begins (only possible when nothing holds them back). Subtask 1 holds back its first
// barrier the same way when it is triggered before its first read.
type runAheadSource struct {
	records   [2]int
	afterSend bool
	barrier0  chan struct{} // closed when subtask 0's position is first taken
	ahead     chan struct{} // closed when subtask 0 ran ahead of that barrier
}

type runAheadReader struct {
	s         *runAheadSource
	ctx       context.Context // the attempt's, for Position
	sub, next int
	barrier   bool // subtask 0: its first barrier was taken
	reads     int  // subtask 0: reads since
}

func (s *runAheadSource) Open(ctx context.Context, sub, p int, pos []byte) (dataflow.SourceReader, error) {
	if p != 2 {
		return nil, fmt.Errorf("runAheadSource has 2 subtasks, not %d", p)
	}
	r := &runAheadReader{s: s, ctx: ctx, sub: sub}
	if pos != nil {
		n, err := strconv.Atoi(string(pos))
		if err != nil {
			return nil, err
		}
		r.next = n
	}
	return r, nil
}

// holdBack returns, for subtask 1 before its first read, once subtask 0 ran ahead of its
// first barrier, or when ctx ends.
func (r *runAheadReader) holdBack(ctx context.Context) error {
	if r.sub != 1 || r.next != 0 {
		return nil
	}
	for _, c := range []chan struct{}{r.s.barrier0, r.s.ahead} {
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (r *runAheadReader) Read(ctx context.Context, max int, emit func(any)) error {
	if err := r.holdBack(ctx); err != nil {
		return err
	}
	if r.sub == 0 && !r.barrier && r.next >= r.s.records[0]/2 {
		// Keep half the input for after the first barrier; read again shortly (the
		// subtask serves barriers between reads).
		select {
		case <-time.After(time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if r.barrier {
		r.reads++
		if r.s.afterSend && r.reads == 2 {
			close(r.s.ahead)
		}
	}
	for n := 0; n < max && r.next < r.s.records[r.sub]; n++ {
		emit(seqRec{Src: r.sub, Seq: r.next, Key: keyOf(r.sub, r.next)})
		r.next++
	}
	if r.barrier && !r.s.afterSend && r.reads == 1 {
		close(r.s.ahead)
	}
	if r.next == r.s.records[r.sub] {
		return io.EOF
	}
	return nil
}

func (r *runAheadReader) Position() ([]byte, error) {
	// A trigger that reaches subtask 1 before its first read (a busy machine may start it
	// late) must not let the first checkpoint align before subtask 0 ran ahead.
	if err := r.holdBack(r.ctx); err != nil {
		return nil, err
	}
	if r.sub == 0 && !r.barrier {
		r.barrier = true
		close(r.s.barrier0)
	}
	return []byte(strconv.Itoa(r.next)), nil
}

func (r *runAheadReader) Close() error { return nil }

// counted is what the keyed operator emits: the record and its key's running count.
type counted struct {
	seqRec
	Count int64
}

// txnSink keeps what each subtask wrote in each checkpoint's transaction, in memory.
type txnSink struct {
	mu   sync.Mutex
	txns map[int64][]counted // checkpoint id → the records pre-committed with it
}

type txnWriter struct {
	s   *txnSink
	cur []counted
}

func (s *txnSink) Open(context.Context, int, int, []byte) (dataflow.SinkWriter, error) {
	return &txnWriter{s: s}, nil
}

func (w *txnWriter) Write(rec any) error {
	w.cur = append(w.cur, rec.(counted))
	return nil
}

func (w *txnWriter) PreCommit(id int64) ([]byte, error) {
	w.s.mu.Lock()
	w.s.txns[id] = append(w.s.txns[id], w.cur...)
	w.s.mu.Unlock()
	w.cur = nil
	return nil, nil
}

func (w *txnWriter) Commit(int64) error  { return nil }
func (w *txnWriter) Aborted(int64) error { return nil }
func (w *txnWriter) Close() error        { return nil }

// runAhead says how a run of runRunAhead goes.
type runAhead struct {
	atLeastOnce bool
	afterSend   bool          // see runAheadSource
	timeout     time.Duration // of a checkpoint; 0: a minute
}

// runRunAhead runs a job counting the records of a runAheadSource per key, and returns the
// sink's transactions and the completed checkpoints.
func runRunAhead(t *testing.T, r runAhead) (*txnSink, *runAheadSource, []*checkpoint.Metadata, *dataflow.RunStats) {
	t.Helper()
	f := newFixture(t, 1, nil)
	src := &runAheadSource{records: [2]int{3000, 1000}, afterSend: r.afterSend,
		barrier0: make(chan struct{}), ahead: make(chan struct{})}
	sink := &txnSink{txns: map[int64][]counted{}}
	j := dataflow.NewJob("runahead")
	j.Parallelism, j.BatchSize = 2, 100
	recs := dataflow.FromSource[seqRec](j, "source", src)
	count := state.NewValue("count", state.Int64)
	keyed := dataflow.KeyBy(recs, func(r seqRec) []byte { return []byte(r.Key) })
	out := dataflow.Process(keyed, "count", []state.Descriptor{count},
		func(kc *dataflow.KeyedContext, r seqRec, emit func(counted)) error {
			n, _, err := count.Get(kc.State())
			if err != nil {
				return err
			}
			n++
			emit(counted{r, n})
			return count.Update(kc.State(), n)
		})
	dataflow.SinkTo(out, sink)
	var mu sync.Mutex
	var done []*checkpoint.Metadata
	stats := &dataflow.RunStats{}
	env := f.env(stats, nil)
	env.AtLeastOnce = r.atLeastOnce
	if r.timeout > 0 {
		env.Timeout, env.TolerableFailures = r.timeout, 1000
	}
	env.OnCheckpoint = func(c *checkpoint.Completed) {
		mu.Lock()
		done = append(done, c.Metadata)
		mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := dataflow.Run(ctx, j, env); err != nil {
		t.Fatal(err)
	}
	select {
	case <-src.ahead:
	default:
		t.Fatal("source subtask 0 never ran ahead of its barrier")
	}
	if len(done) < 1 {
		t.Fatal("no checkpoint completed")
	}
	return sink, src, done, stats
}

// checkAligned checks that every completed checkpoint holds exactly the records before
// its barriers, each with its key's count among them.
func checkAligned(t *testing.T, sink *txnSink, done []*checkpoint.Metadata) {
	t.Helper()
	for _, m := range done {
		got, pos := snapshotContents(t, sink, m)
		// Expected, from the input alone: every record before the barrier positions, each
		// with its key's count among them (a source subtask's records are in order, and
		// its keys' counts do not depend on the other subtask's).
		want := map[seqRec]int64{}
		perKey := map[string]int64{}
		for s := 0; s < 2; s++ {
			for seq := 0; seq < pos[s]; seq++ {
				r := seqRec{Src: s, Seq: seq, Key: keyOf(s, seq)}
				want[r] = 0
				perKey[r.Key]++
			}
		}
		maxCount := map[string]int64{}
		for r, c := range got {
			if _, ok := want[r]; !ok {
				t.Fatalf("checkpoint %d (source positions %v) holds record %+v, which follows its source's barrier", m.CheckpointID, pos, r)
			}
			maxCount[r.Key] = max(maxCount[r.Key], c)
		}
		if len(got) != len(want) {
			t.Fatalf("checkpoint %d holds %d records, want the %d before the barriers at %v", m.CheckpointID, len(got), len(want), pos)
		}
		for k, n := range perKey {
			if maxCount[k] != n {
				t.Fatalf("checkpoint %d: key %s counted to %d in the snapshot, want %d", m.CheckpointID, k, maxCount[k], n)
			}
		}
	}
}

// snapshotContents returns, for checkpoint m, the records in the sink's transactions up
// to m, and the source positions m holds.
func snapshotContents(t *testing.T, sink *txnSink, m *checkpoint.Metadata) (map[seqRec]int64, [2]int) {
	t.Helper()
	var pos [2]int
	for _, st := range m.Operator("source").Subtasks {
		n, err := strconv.Atoi(string(st.Operator))
		if err != nil {
			t.Fatalf("checkpoint %d: source subtask %d position %q: %v", m.CheckpointID, st.Index, st.Operator, err)
		}
		pos[st.Index] = n
	}
	got := map[seqRec]int64{}
	for id, txn := range sink.txns {
		if id > m.CheckpointID {
			continue
		}
		for _, c := range txn {
			if _, dup := got[c.seqRec]; dup {
				t.Fatalf("checkpoint %d: record %+v written twice", m.CheckpointID, c.seqRec)
			}
			got[c.seqRec] = c.Count
		}
	}
	return got, pos
}

func TestAlignedSnapshotHoldsNoRecordAfterItsBarrier(t *testing.T) {
	sink, src, done, _ := runRunAhead(t, runAhead{})
	if len(done) < 2 {
		t.Fatalf("%d checkpoints completed, want the first and the final at least", len(done))
	}
	checkAligned(t, sink, done)
	first := done[0]
	if _, pos := snapshotContents(t, sink, first); pos[0] >= src.records[0] {
		t.Fatalf("checkpoint %d was taken after source subtask 0 read everything (position %d): nothing ran ahead", first.CheckpointID, pos[0])
	}
}

// TestAbortedCheckpointReleasesItsAlignment: source subtask 1 holds its first barrier
// back until subtask 0 has sent records that follow its own, which exactly-once mode
// allows only once the receivers gave up aligning that barrier: when the checkpoint
// expired. The later checkpoints are still exact.
func TestAbortedCheckpointReleasesItsAlignment(t *testing.T) {
	sink, src, done, stats := runRunAhead(t, runAhead{afterSend: true, timeout: time.Second})
	if stats.FailedCheckpoints < 1 || done[0].CheckpointID == 1 {
		t.Fatalf("checkpoint 1 did not fail (%d failed, the first completed is %d)", stats.FailedCheckpoints, done[0].CheckpointID)
	}
	checkAligned(t, sink, done)
	final, _ := snapshotContents(t, sink, done[len(done)-1])
	if want := src.records[0] + src.records[1]; len(final) != want {
		t.Fatalf("%d records written, want %d", len(final), want)
	}
}

func TestAtLeastOnceSnapshotMayHoldRecordsAfterItsBarrier(t *testing.T) {
	sink, src, done, _ := runRunAhead(t, runAhead{atLeastOnce: true, afterSend: true})
	got, pos := snapshotContents(t, sink, done[0])
	after := 0
	for r := range got {
		if r.Seq >= pos[r.Src] {
			after++
		}
	}
	// Subtask 0 sent a batch after its barrier before subtask 1 sent its own, and nothing
	// held it back.
	if after == 0 {
		t.Fatalf("checkpoint %d holds no record after its barrier (positions %v): at-least-once mode aligned the inputs", done[0].CheckpointID, pos)
	}
	// Without a failure every record is still processed exactly once.
	final, _ := snapshotContents(t, sink, done[len(done)-1])
	if want := src.records[0] + src.records[1]; len(final) != want {
		t.Fatalf("%d records written, want %d", len(final), want)
	}
	t.Logf("checkpoint %d holds %d records that follow their source's barrier", done[0].CheckpointID, after)
}

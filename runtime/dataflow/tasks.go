package dataflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/state"
	"github.com/flowstate/flowstate/sdk"
)

// barrier marks a checkpoint's position in every stream.
type barrier struct {
	id        int64
	savepoint bool
	full      bool // keyed snapshots reference no file of an earlier checkpoint
	streams   sdk.CheckpointStreamFactory
	triggered time.Time
}

// ack is a subtask's answer to a barrier: its state, or the reason it declined.
type ack struct {
	id     int64
	states []opState
	err    error
	// task and subtask name the subtask; timing says how its part of the checkpoint went.
	task    string
	subtask int
	timing  ackTiming
}

// ackTiming is how a subtask's part of a checkpoint went, for Env.Events.
type ackTiming struct {
	sync, async, alignment, startDelay time.Duration
}

type opState struct {
	op string
	st checkpoint.SubtaskState
}

// sourceTask runs one source subtask and the stateless chain behind it.
type sourceTask struct {
	a        *attempt
	idx      int
	reader   SourceReader
	out      *output
	triggers chan *barrier
	rate     float64       // records per second for this subtask; 0: no limit
	records  SubtaskEvents // the subtask's record counts
}

func (t *sourceTask) run(ctx context.Context) error {
	var chainErr error
	emit := chainEmit(t.a.job.stages[0].chain, func(r any) { t.out.emit(ctx, r) }, &chainErr)
	limit := newLimiter(t.rate)
	batch := t.a.job.BatchSize
	// drain is closed by `runner stop --drain`: the input ends there, unless the reader
	// drains to its end (DrainToEnd); then it is read on until io.EOF.
	drain := t.a.drain
	drained := func() bool {
		if d, ok := t.reader.(DrainToEnd); ok && d.DrainToEnd() {
			drain = nil
			return false
		}
		return true
	}
	for {
		select {
		case b := <-t.triggers:
			if err := t.barrier(ctx, b); err != nil {
				return err
			}
			continue
		case <-drain:
			if drained() {
				return t.finished(ctx)
			}
			continue
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		n, wait := limit.take(batch)
		if n == 0 {
			select {
			case b := <-t.triggers:
				if err := t.barrier(ctx, b); err != nil {
					return err
				}
			case <-time.After(wait):
			case <-drain:
				if drained() {
					return t.finished(ctx)
				}
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		}
		read := 0
		err := t.reader.Read(ctx, n, func(r any) { read++; emit(r) })
		limit.used(n, read)
		t.records.RecordsOut(read)
		if chainErr != nil {
			return fmt.Errorf("source %s subtask %d: %w", t.a.job.sourceID, t.idx, chainErr)
		}
		if ferr := t.out.flush(ctx); ferr != nil {
			return ferr
		}
		if errors.Is(err, io.EOF) {
			return t.finished(ctx)
		}
		if err != nil {
			return fmt.Errorf("source %s subtask %d: %w", t.a.job.sourceID, t.idx, err)
		}
	}
}

// finished serves barriers until the coordinator says the final checkpoint is complete. A
// subtask gets here at the end of its input, or when the job is drained.
func (t *sourceTask) finished(ctx context.Context) error {
	select {
	case t.a.sourceDone <- t.idx:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		select {
		case b := <-t.triggers:
			if err := t.barrier(ctx, b); err != nil {
				return err
			}
		case <-t.a.finish:
			return t.out.broadcast(ctx, endOfStream)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (t *sourceTask) barrier(ctx context.Context, b *barrier) error {
	pos, err := t.reader.Position()
	if err != nil {
		return fmt.Errorf("source %s subtask %d: position: %w", t.a.job.sourceID, t.idx, err)
	}
	if err := t.out.broadcast(ctx, b); err != nil {
		return err
	}
	t.a.sendAck(ctx, ack{id: b.id, states: []opState{{t.a.job.sourceID, checkpoint.SubtaskState{Index: t.idx, Operator: pos}}},
		task: t.a.job.sourceID, subtask: t.idx, timing: ackTiming{startDelay: time.Since(b.triggered)}})
	return nil
}

// stageTask runs one subtask of a keyed stage: its keyed operator, the stateless chain
// behind it, and the sink when the stage is the last.
type stageTask struct {
	a      *attempt
	idx    int
	st     *stage
	in     *inbox
	inputs int // the subtasks of the stage before, all sending into in
	kb     sdk.KeyedStateBackend
	store  *state.Store
	out    *output
	sink   SinkWriter
	notify chan struct{}
	// pending is the barrier being aligned, once one of its messages was taken (see
	// exchange.go; inputs may pass it without a message).
	pending *barrier
	// aligned is the newest barrier aligned or released, as published in in.aligned.
	aligned     int64
	lastAborted int64 // the newest aborted checkpoint passed on
	done        int64 // newest checkpoint committed
	seenAborts  int   // entries of a.abortedIDs already passed on
	begun       bool  // a batch has been processed
	// pauses are the durations of the synchronous snapshots this subtask took.
	pauses []time.Duration
	// records and sinkRecords count the operator's and its sink's records; seenID and
	// seenAt say when the barrier being aligned first reached the subtask.
	records, sinkRecords SubtaskEvents
	seenID               int64
	seenAt               time.Time
}

// lookahead is how many batches a keyed subtask takes in before it processes the oldest:
// their state is read (Store.Prefetch) while the batches before them are processed.
const lookahead = 3

func (t *stageTask) run(ctx context.Context) error {
	var procErr error
	emit := chainEmit(t.st.chain, func(r any) { t.out.emit(ctx, r) }, &procErr)
	fn := t.st.bind(emit)
	kc := &KeyedContext{store: t.store}
	var ahead []message // batches taken in, in order, their state being read
	process := func() error {
		m := ahead[0]
		ahead[0] = message{}
		ahead = ahead[1:]
		if !t.begun {
			t.begun = true
			t.a.started()
		}
		emitted := t.out.emitted
		err := t.store.ProcessBatch(ctx, m.keys, m.groups, func(i int) error {
			if err := fn(kc, m.recs[i]); err != nil {
				return err
			}
			return procErr
		})
		t.records.RecordsIn(len(m.recs))
		releaseBatch(m)
		t.records.RecordsOut(t.out.emitted - emitted)
		t.sinkRecords.RecordsIn(t.out.emitted - emitted)
		if err == nil {
			err = t.out.err
		}
		if err != nil {
			return fmt.Errorf("operator %s subtask %d: %w", t.st.id, t.idx, err)
		}
		return nil
	}
	drain := func() error {
		for len(ahead) > 0 {
			if err := process(); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		if len(t.in.ch) == 0 {
			// With no input ready, process what was taken in, then flush what is
			// buffered before blocking, so batches never wait for more input.
			if len(ahead) > 0 {
				if err := process(); err != nil {
					return err
				}
				continue
			}
			if err := t.out.flush(ctx); err != nil {
				return err
			}
		}
		var done *barrier // a barrier every input has passed
		select {
		case m := <-t.in.ch:
			if m.barrier == nil {
				t.store.Prefetch(ctx, m.keys, m.groups)
				ahead = append(ahead, m)
				if len(ahead) > lookahead {
					if err := process(); err != nil {
						return err
					}
				}
				continue
			}
			t.seen(m.barrier)
			var err error
			if done, err = t.arrive(ctx, m.barrier); err != nil {
				return err
			}
		case <-t.in.ready:
			b, all := t.in.passed()
			t.seen(b)
			if all {
				done = b
			}
		case <-t.notify:
			if err := t.commit(ctx); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
		switch {
		case done == nil:
			if err := t.releaseAborted(ctx); err != nil {
				return err
			}
		case done == endOfStream:
			// What was taken in before comes first.
			if err := drain(); err != nil {
				return err
			}
			return t.finish(ctx)
		case done.id <= t.lastAborted:
			if err := t.release(ctx, done); err != nil {
				return err
			}
		default:
			// Aligned: the senders may go on, and what they send now waits in the inbox
			// until the snapshot is taken. What was taken in before comes first.
			t.pending = nil
			t.publish(done.id, true)
			if err := drain(); err != nil {
				return err
			}
			if err := t.checkpoint(ctx, done); err != nil {
				return err
			}
		}
	}
}

// seen notes when barrier b first reached the subtask (nil: none), for its alignment
// time and start delay.
func (t *stageTask) seen(b *barrier) {
	if b != nil && b != endOfStream && b.id != t.seenID {
		t.seenID, t.seenAt = b.id, time.Now()
	}
}

// timing is how the subtask's part of checkpoint b went so far: its start delay and its
// alignment, ended now.
func (t *stageTask) timing(b *barrier) ackTiming {
	if t.seenID != b.id {
		return ackTiming{}
	}
	return ackTiming{alignment: time.Since(t.seenAt), startDelay: t.seenAt.Sub(b.triggered)}
}

// arrive counts barrier b, taken from the inbox, and returns it once every input has
// passed it.
func (t *stageTask) arrive(ctx context.Context, b *barrier) (*barrier, error) {
	if b.id <= t.aligned {
		return nil, nil // a late copy of a barrier whose alignment was released
	}
	if t.pending != nil && b.id > t.pending.id {
		// The coordinator triggers a checkpoint only after the one before completed or
		// was aborted, and the pending one cannot complete without this subtask: it was
		// aborted. Only at-least-once senders get here (see exchange.go).
		if err := t.release(ctx, t.pending); err != nil {
			return nil, err
		}
	}
	t.pending = b
	if t.in.arrived() {
		return b, nil
	}
	return nil, nil
}

// releaseAborted releases the alignment in progress if its checkpoint was aborted. The
// subtask learns of it when the coordinator pokes it (commit), and of the barrier when
// it takes its first message or an input first passes it (inbox.pass signals then), so
// it checks after each.
func (t *stageTask) releaseAborted(ctx context.Context) error {
	b := t.pending
	if b == nil {
		b, _ = t.in.passed()
	}
	if b != nil && b.id <= t.lastAborted {
		return t.release(ctx, b)
	}
	return nil
}

// release ends the alignment of b, an aborted checkpoint, without a snapshot: the
// senders waiting for it go on, and the barrier goes on downstream so that every subtask
// still passes every barrier once and in order (see exchange.go).
func (t *stageTask) release(ctx context.Context, b *barrier) error {
	t.pending = nil
	t.publish(b.id, false)
	if t.sink != nil {
		return nil
	}
	return t.out.broadcast(ctx, b)
}

// publish makes barrier id aligned, settled when every input's barrier was taken (not
// when the alignment was released), and starts counting the next.
func (t *stageTask) publish(id int64, settled bool) {
	t.aligned = id
	t.in.align(id, t.inputs, settled)
}

// checkpoint takes the subtask's part of checkpoint b once its barrier arrived on every
// input: the synchronous snapshot and the sink's pre-commit here, the upload in the
// background while processing goes on.
func (t *stageTask) checkpoint(ctx context.Context, b *barrier) error {
	timing := t.timing(b)
	// Pass on completions first, so an incremental backend builds on the newest completed
	// checkpoint and never references files the runner is about to discard.
	if err := t.commit(ctx); err != nil {
		return err
	}
	var snap sdk.Snapshot
	var snapErr error
	if t.kb != nil {
		if err := t.syncState(); err != nil {
			return err
		}
		start := time.Now()
		snap, snapErr = t.kb.Snapshot(ctx, sdk.SnapshotOptions{CheckpointID: b.id, Savepoint: b.savepoint, Full: b.full})
		timing.sync = time.Since(start)
		t.pauses = append(t.pauses, timing.sync)
	}
	var sinkState []byte
	if t.sink != nil {
		var err error
		if sinkState, err = t.sink.PreCommit(b.id); err != nil {
			return fmt.Errorf("sink subtask %d: pre-commit for checkpoint %d: %w", t.idx, b.id, err)
		}
	}
	if t.sink == nil {
		if err := t.out.broadcast(ctx, b); err != nil {
			if snap != nil {
				snap.Release()
			}
			return err
		}
	}
	states := []opState{}
	if t.sink != nil {
		states = append(states, opState{SinkID, checkpoint.SubtaskState{Index: t.idx, Operator: sinkState}})
	}
	if snapErr != nil {
		t.a.sendAck(ctx, ack{id: b.id, err: fmt.Errorf("operator %s subtask %d: snapshot: %w", t.st.id, t.idx, snapErr)})
		return nil
	}
	if snap == nil {
		t.a.sendAck(ctx, ack{id: b.id, states: append(states, opState{t.st.id, checkpoint.SubtaskState{Index: t.idx}}),
			task: t.st.id, subtask: t.idx, timing: timing})
		return nil
	}
	t.a.async.Add(1)
	go func() {
		defer t.a.async.Done()
		defer snap.Release()
		start := time.Now()
		handles, err := snap.Write(ctx, b.streams)
		if err != nil {
			t.a.sendAck(ctx, ack{id: b.id, err: fmt.Errorf("operator %s subtask %d: upload snapshot: %w", t.st.id, t.idx, err)})
			return
		}
		timing.async = time.Since(start)
		t.a.sendAck(ctx, ack{id: b.id, states: append(states, opState{t.st.id, checkpoint.SubtaskState{Index: t.idx, Keyed: handles}}),
			task: t.st.id, subtask: t.idx, timing: timing})
	}()
	return nil
}

// syncState waits for the state writes in flight: the keyed backend sees one call at a
// time, so they complete before any other call reaches it.
func (t *stageTask) syncState() error {
	if err := t.store.Sync(); err != nil {
		return fmt.Errorf("operator %s subtask %d: %w", t.st.id, t.idx, err)
	}
	return nil
}

// commit makes the sink and the backend see the newest completed checkpoint, and the
// checkpoints aborted since the last call.
func (t *stageTask) commit(ctx context.Context) error {
	t.a.abortMu.Lock()
	aborted := t.a.abortedIDs[t.seenAborts:]
	t.seenAborts = len(t.a.abortedIDs)
	t.a.abortMu.Unlock()
	for _, id := range aborted {
		t.lastAborted = max(t.lastAborted, id)
		if t.sink != nil {
			if err := t.sink.Aborted(id); err != nil {
				return fmt.Errorf("sink subtask %d: checkpoint %d aborted: %w", t.idx, id, err)
			}
		}
		if t.kb != nil {
			if err := t.syncState(); err != nil {
				return err
			}
			if err := t.kb.NotifyCheckpointAborted(ctx, id); err != nil {
				return fmt.Errorf("operator %s subtask %d: notify checkpoint %d aborted: %w", t.st.id, t.idx, id, err)
			}
		}
	}
	id := t.a.completed.Load()
	if id <= t.done {
		return nil
	}
	t.done = id
	if t.sink != nil {
		if err := t.a.fence("sink subtask %d: commit checkpoint %d", t.idx, id); err != nil {
			return err
		}
		if err := t.sink.Commit(id); err != nil {
			return fmt.Errorf("sink subtask %d: commit checkpoint %d: %w", t.idx, id, err)
		}
	}
	if t.kb != nil {
		if err := t.syncState(); err != nil {
			return err
		}
		if err := t.kb.NotifyCheckpointComplete(ctx, id); err != nil {
			return fmt.Errorf("operator %s subtask %d: notify checkpoint %d complete: %w", t.st.id, t.idx, id, err)
		}
	}
	return nil
}

// finish ends the subtask after its inputs ended: the final checkpoint is complete by
// then, so it commits and passes the end on.
func (t *stageTask) finish(ctx context.Context) error {
	if err := t.commit(ctx); err != nil {
		return err
	}
	if f, ok := t.sink.(Flusher); ok {
		if err := f.Flush(); err != nil {
			return fmt.Errorf("sink subtask %d: finish the commit of checkpoint %d: %w", t.idx, t.done, err)
		}
	}
	if t.sink != nil {
		return nil
	}
	return t.out.broadcast(ctx, endOfStream)
}

// limiter spreads a records-per-second budget over time.
type limiter struct {
	rate   float64
	start  time.Time
	issued float64
}

func newLimiter(rate float64) *limiter { return &limiter{rate: rate, start: time.Now()} }

// take returns how many records may be read now (at most max), or how long to wait.
func (l *limiter) take(max int) (int, time.Duration) {
	if l.rate <= 0 {
		return max, 0
	}
	allowed := l.rate*time.Since(l.start).Seconds() - l.issued
	if allowed < 1 {
		return 0, time.Duration((1 - allowed) / l.rate * float64(time.Second))
	}
	if allowed > float64(max) {
		allowed = float64(max)
	}
	return int(allowed), 0
}

// used records that read of the n granted records were read.
func (l *limiter) used(n, read int) {
	if l.rate > 0 {
		l.issued += float64(read)
	}
}

package dataflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
)

// pendingCheckpoint is a checkpoint whose barriers are in flight.
type pendingCheckpoint struct {
	b        *barrier
	loc      sdk.CheckpointStorageLocation
	states   []opState
	acks     int
	started  time.Time
	final    bool
	request  *SavepointRequest
	deadline *time.Timer
}

// coordinate is the checkpoint coordinator of one attempt: it triggers periodic
// checkpoints, collects acknowledgements, completes checkpoints by publishing their
// metadata through the storage, and aborts those that fail or expire. It returns when the
// job finished (nil) or must fail over (the error).
//
// Up to Env.MaxConcurrent checkpoints are in flight at once; acknowledgements are matched
// by checkpoint id, each checkpoint completes or expires on its own, and one that completes
// subsumes the older ones still in flight (they are aborted, without counting as failures,
// as in Flink), so checkpoints complete in id order. A periodic checkpoint is triggered no
// sooner than Env.MinPause after the last completion: a tick that comes earlier is deferred
// to that moment. Savepoints and the final checkpoint wait until none is in flight.
//
// A savepoint request with Drain (`runner stop --drain`) ends the sources' input first
// (drain.go); the final checkpoint is then that request's savepoint, and the job finishes.
func (a *attempt) coordinate(ctx context.Context, tasksDone <-chan struct{}) error {
	env := a.env
	var tick <-chan time.Time
	if env.Interval > 0 {
		t := time.NewTicker(env.Interval)
		defer t.Stop()
		tick = t.C
	}
	maxConcurrent := max(1, env.MaxConcurrent)
	expected := a.job.Parallelism * len(a.job.stages)
	pending := map[int64]*pendingCheckpoint{}
	var queued []*SavepointRequest
	sourcesDone, failures := 0, 0
	finalDone := false
	var lastCompleted time.Time // when the last checkpoint completed; zero: none yet
	pause := time.NewTimer(time.Hour)
	pause.Stop()
	defer pause.Stop()
	// retry fires after a checkpoint could not even start (its location was not set up),
	// so that a final checkpoint, which no tick triggers, is tried again.
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	deferred := false // a periodic trigger waits for the min-pause
	var never <-chan time.Time
	defer func() {
		for _, p := range pending {
			a.abort(p, errors.New("job stopped"))
		}
		for _, r := range queued {
			r.Reply <- SavepointResult{Err: errors.New("job stopped before the savepoint was taken")}
		}
	}()
	trigger := func(final bool, req *SavepointRequest) error {
		id := env.Checkpoints.NextID()
		p := &pendingCheckpoint{started: time.Now(), final: final, request: req}
		kind := KindCheckpoint
		switch {
		case req != nil && req.Stop:
			kind = KindSyncSavepoint
		case req != nil:
			kind = KindSavepoint
		}
		a.events.CheckpointTriggered(id, kind, p.started)
		var err error
		access := env.Checkpoints.Access()
		// Setting up the location is part of the checkpoint: a storage that hangs here
		// must not stall the coordinator past execution.checkpointing.timeout.
		ictx, cancel := context.WithDeadline(ctx, p.started.Add(env.Timeout))
		if req != nil {
			p.loc, err = access.InitializeLocationForSavepoint(ictx, id, req.Target)
		} else {
			p.loc, err = access.InitializeLocationForCheckpoint(ictx, id)
		}
		expired := ictx.Err() != nil && ctx.Err() == nil
		cancel()
		if err != nil {
			if expired {
				err = fmt.Errorf("checkpoint %d expired after %s (execution.checkpointing.timeout) while its location was initialized: %w", id, env.Timeout, err)
			} else {
				err = fmt.Errorf("checkpoint %d: initialize location: %w", id, err)
			}
			retry.Reset(retryDelay)
			a.events.CheckpointFailed(id, time.Now(), err.Error())
			if req != nil && !final { // a drain's final savepoint is tried again
				req.Reply <- SavepointResult{Err: err}
				return nil
			}
			return a.failed(&failures, err)
		}
		full := env.FullFirstCheckpoint && a.completed.Load() == a.restoredID
		uploaded := func(n int64) { a.events.CheckpointUploaded(id, n) }
		p.b = &barrier{id: id, savepoint: req != nil, full: full, streams: checkpoint.Checksummed(p.loc, uploaded), triggered: p.started}
		p.deadline = time.NewTimer(time.Until(p.started.Add(env.Timeout)))
		pending[id] = p
		a.log.Debug("triggering checkpoint", "id", id, "savepoint", req != nil, "final", final, "full", full, "in_flight", len(pending))
		for _, s := range a.sources {
			select {
			case s.triggers <- p.b:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	// periodic triggers a periodic checkpoint when one may start now, deferring it when
	// only the min-pause holds it back.
	periodic := func() error {
		deferred = false
		if len(pending) >= maxConcurrent || len(queued) > 0 || finalDone || sourcesDone == a.job.Parallelism || a.drainReq != nil {
			return nil
		}
		if wait := time.Until(lastCompleted.Add(env.MinPause)); env.MinPause > 0 && !lastCompleted.IsZero() && wait > 0 {
			deferred = true
			pause.Reset(wait)
			return nil
		}
		return trigger(false, nil)
	}
	next := func() error {
		if len(pending) > 0 || finalDone {
			return nil
		}
		if len(queued) > 0 {
			req := queued[0]
			queued = queued[1:]
			return trigger(false, req)
		}
		if sourcesDone == a.job.Parallelism {
			return trigger(true, a.drainReq) // a drain's final checkpoint is its savepoint
		}
		return nil
	}
	// fail aborts a pending checkpoint that will not complete and counts the failure.
	fail := func(p *pendingCheckpoint, err error) error {
		delete(pending, p.b.id)
		a.abort(p, err)
		if err := a.failed(&failures, err); err != nil {
			return err
		}
		return next()
	}
	for {
		deadline := never
		var oldest *pendingCheckpoint
		for _, p := range pending {
			if oldest == nil || p.b.id < oldest.b.id {
				oldest = p
			}
		}
		if oldest != nil {
			deadline = oldest.deadline.C
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tasksDone:
			if finalDone {
				return nil
			}
			return errors.New("tasks stopped before the job finished")
		case <-tick:
			if !deferred {
				if err := periodic(); err != nil {
					return err
				}
			}
		case <-retry.C:
			if err := next(); err != nil {
				return err
			}
		case <-pause.C:
			if deferred {
				if err := periodic(); err != nil {
					return err
				}
			}
		case req := <-env.Savepoints:
			if finalDone {
				req.Reply <- SavepointResult{Err: errors.New("the job has finished")}
				continue
			}
			if req.Drain {
				if err := a.startDrain(&req); err != nil {
					req.Reply <- SavepointResult{Err: err}
					continue
				}
				if err := next(); err != nil {
					return err
				}
				continue
			}
			queued = append(queued, &req)
			if err := next(); err != nil {
				return err
			}
		case <-a.sourceDone:
			sourcesDone++
			if err := next(); err != nil {
				return err
			}
		case <-deadline:
			p := oldest
			err := fmt.Errorf("checkpoint %d expired after %s (execution.checkpointing.timeout) with %d of %d subtasks acknowledged", p.b.id, env.Timeout, p.acks, expected)
			if err := fail(p, err); err != nil {
				return err
			}
		case x := <-a.acks:
			p := pending[x.id]
			if p == nil {
				a.discardShared(x.states) // late answer to an aborted checkpoint
				continue
			}
			if x.err != nil {
				if err := fail(p, fmt.Errorf("checkpoint %d declined: %w", p.b.id, x.err)); err != nil {
					return err
				}
				continue
			}
			p.states = append(p.states, x.states...)
			a.acknowledged(x)
			if p.acks++; p.acks < expected {
				continue
			}
			delete(pending, p.b.id)
			p.deadline.Stop()
			done, err := a.complete(ctx, p)
			if err != nil {
				if err := fail(p, err); err != nil {
					return err
				}
				continue
			}
			failures, lastCompleted = 0, time.Now()
			for id, older := range pending {
				if id < p.b.id && older.request == nil {
					delete(pending, id)
					a.abort(older, fmt.Errorf("checkpoint %d subsumed by checkpoint %d", id, p.b.id))
				}
			}
			if p.final {
				finalDone = true
				close(a.finish)
			}
			switch {
			case p.request != nil && p.final:
				a.drained = &done.Location // Run replies once the sinks committed it
			case p.request != nil:
				p.request.Reply <- SavepointResult{Location: done.Location}
				if p.request.Stop {
					return errStopped
				}
			}
			if err := next(); err != nil {
				return err
			}
		}
	}
}

// retryDelay is how long the coordinator waits before it tries again to start a
// checkpoint whose location could not be set up.
const retryDelay = 100 * time.Millisecond

// errStopped ends an attempt after a stop-with-savepoint.
var errStopped = errors.New("job stopped with a savepoint")

// IsStopped reports whether Run ended because the job was stopped with a savepoint.
func IsStopped(err error) bool { return errors.Is(err, errStopped) }

// failed counts a failed checkpoint and returns an error once the consecutive failures
// exceed the tolerable number.
func (a *attempt) failed(failures *int, err error) error {
	*failures++
	if a.env.Stats != nil {
		a.env.Stats.FailedCheckpoints++
	}
	if *failures > a.env.TolerableFailures {
		return fmt.Errorf("%w; %d consecutive failed checkpoints exceed execution.checkpointing.tolerable-failed-checkpoints (%d)", err, *failures, a.env.TolerableFailures)
	}
	a.log.Warn("checkpoint failed", "error", err, "consecutive", *failures, "tolerable", a.env.TolerableFailures)
	return nil
}

// abort disposes of a checkpoint that will not complete and tells the subtasks.
func (a *attempt) abort(p *pendingCheckpoint, reason error) {
	p.deadline.Stop()
	a.events.CheckpointFailed(p.b.id, time.Now(), reason.Error())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.loc.DisposeOnFailure(ctx); err != nil {
		a.log.Warn("disposing failed checkpoint", "id", p.b.id, "error", err)
	}
	a.discardShared(p.states)
	if p.request != nil && !p.final { // a drain's final savepoint is tried again; Run replies
		p.request.Reply <- SavepointResult{Err: reason}
	}
	a.abortMu.Lock()
	a.abortedIDs = append(a.abortedIDs, p.b.id)
	a.abortMu.Unlock()
	a.poke()
}

// poke wakes every keyed subtask to pass on completed and aborted checkpoints.
func (a *attempt) poke() {
	for _, ts := range a.stages {
		for _, t := range ts {
			select {
			case t.notify <- struct{}{}:
			default:
			}
		}
	}
}

// acknowledged reports a subtask's successful part of a checkpoint (Env.Events): its
// timing, the state it references and what it uploaded (the shared streams the latest
// completed checkpoint already referenced were not uploaded again).
func (a *attempt) acknowledged(x ack) {
	env := a.env
	if env.Events == nil {
		return
	}
	old := map[string]bool{}
	if l := env.Checkpoints.Latest(); l != nil {
		old = checkpoint.SharedRefs(l.Metadata)
	}
	var size, added int64
	for _, s := range x.states {
		size += int64(len(s.st.Operator))
		added += int64(len(s.st.Operator))
		for _, h := range s.st.Keyed {
			for _, f := range h.Files {
				size += f.Handle.Size
				if f.Handle.Scope != sdk.ScopeShared || !old[f.Handle.Ref] {
					added += f.Handle.Size
				}
			}
		}
	}
	a.events.SubtaskAcknowledged(x.id, x.task, x.subtask, AckStats{
		At: time.Now(), Sync: x.timing.sync, Async: x.timing.async, Alignment: x.timing.alignment,
		StartDelay: x.timing.startDelay, StateSize: size, CheckpointedSize: added,
	})
}

// discardShared deletes the shared uploads of subtask states that will never be part of a
// completed checkpoint.
func (a *attempt) discardShared(states []opState) {
	if len(states) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	subs := make([]checkpoint.SubtaskState, len(states))
	for i, s := range states {
		subs[i] = s.st
	}
	if err := a.env.Checkpoints.DiscardUnreferenced(ctx, subs); err != nil {
		a.log.Warn("discarding the uploads of a failed checkpoint", "error", err)
	}
}

// complete publishes a checkpoint's metadata, retains it and notifies the subtasks.
func (a *attempt) complete(ctx context.Context, p *pendingCheckpoint) (*checkpoint.Completed, error) {
	env := a.env
	m := &checkpoint.Metadata{
		Version: checkpoint.MetadataVersion, JobID: a.job.Name, CheckpointID: p.b.id,
		Savepoint: p.request != nil, Time: time.Now().UTC(), Backend: env.BackendName,
		MaxParallelism: a.job.MaxParallelism,
	}
	byOp := map[string]*checkpoint.OperatorState{}
	var order []string
	for _, s := range p.states {
		os := byOp[s.op]
		if os == nil {
			os = &checkpoint.OperatorState{ID: s.op, Parallelism: a.job.Parallelism}
			byOp[s.op] = os
			order = append(order, s.op)
		}
		os.Subtasks = append(os.Subtasks, s.st)
	}
	for _, op := range order {
		m.Operators = append(m.Operators, *byOp[op])
	}
	if p.final && p.request != nil || a.finishedSource {
		a.markFinished(m) // a drain's savepoint, or a checkpoint of a job restored from one
	}
	a.job.Shape().Record(m)
	var prev *checkpoint.Metadata
	if l := env.Checkpoints.Latest(); l != nil {
		prev = l.Metadata
	}
	m.SetDelta(prev)
	// Publishing is part of the checkpoint: a storage that hangs here must not stall the
	// coordinator past execution.checkpointing.timeout.
	pctx, cancel := context.WithDeadline(ctx, p.started.Add(env.Timeout))
	defer cancel()
	if err := a.fence("checkpoint %d: publish", p.b.id); err != nil {
		return nil, err
	}
	loc, err := checkpoint.Publish(pctx, p.loc, m)
	if err != nil {
		if pctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("checkpoint %d expired after %s (execution.checkpointing.timeout) while its metadata was published: %w", p.b.id, env.Timeout, err)
		}
		return nil, fmt.Errorf("checkpoint %d: %w", p.b.id, err)
	}
	c := &checkpoint.Completed{Location: loc, Metadata: m, Owned: p.request == nil}
	if p.request == nil {
		if err := env.Checkpoints.Add(ctx, c); err != nil {
			a.log.Warn("retention", "error", err)
		}
	}
	if env.Stats != nil {
		env.Stats.Checkpoints++
		env.Stats.CheckpointDurations = append(env.Stats.CheckpointDurations, time.Since(p.started))
	}
	a.log.Info("checkpoint complete", "id", p.b.id, "savepoint", p.request != nil, "pointer", loc.ExternalPointer,
		"bytes", m.StateSize(), "added", m.AddedBytes, "duration", time.Since(p.started).Round(time.Millisecond))
	a.events.CheckpointCompleted(p.b.id, time.Now(), CompletedStatsFrom(m, loc.ExternalPointer))
	for _, s := range p.states {
		if len(s.st.Keyed) > 0 { // the keyed state of the subtask, as this checkpoint holds it
			var size int64
			for _, h := range s.st.Keyed {
				for _, f := range h.Files {
					size += f.Handle.Size
				}
			}
			a.events.Subtask(s.op, s.st.Index).SetStateSize(size)
		}
	}
	if env.OnCheckpoint != nil {
		env.OnCheckpoint(c)
	}
	// The sinks commit what a checkpoint covers once it completes; a savepoint's only when
	// it is a drain's final one, the synchronous savepoint of Flink's stop --drain.
	if p.request == nil || p.final {
		a.completed.Store(p.b.id)
		a.poke()
	}
	return c, nil
}

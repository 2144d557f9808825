package dataflow

import (
	"context"
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
)

// What the coordinator does to one checkpoint: complete it (publish its metadata), take in
// a subtask's acknowledgement, abort it.

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
	m := a.metadata(p)
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
	// A runner frozen while its metadata was written (SIGSTOP, a stalled VM) may wake after
	// another runner took the job over: the write landed, but the checkpoint is no longer
	// this runner's to complete, so it is neither reported, retained nor committed.
	if err := a.fence("checkpoint %d: complete", p.b.id); err != nil {
		return nil, err
	}
	c := &checkpoint.Completed{Location: loc, Metadata: m, Owned: !p.savepoint()}
	if !p.savepoint() {
		if err := env.Checkpoints.Add(ctx, c); err != nil {
			a.log.Warn("retention", "error", err)
		}
	}
	a.reportCompleted(p, c)
	if env.OnCheckpoint != nil {
		env.OnCheckpoint(c)
	}
	// The sinks commit what a checkpoint covers once it completes; a savepoint's only when
	// it is a drain's final one, the synchronous savepoint of Flink's stop --drain.
	if !p.savepoint() || p.final {
		a.completed.Store(p.b.id)
		a.poke()
	}
	return c, nil
}

// metadata returns the metadata of p, which every subtask acknowledged: the subtasks'
// states by operator, the job's shape, and the delta to the latest completed checkpoint.
func (a *attempt) metadata(p *pendingCheckpoint) *checkpoint.Metadata {
	m := &checkpoint.Metadata{
		Version: checkpoint.MetadataVersion, JobID: a.job.Name, CheckpointID: p.b.id,
		Savepoint: p.savepoint(), Time: time.Now().UTC(), Backend: a.env.BackendName,
		MaxParallelism: a.job.MaxParallelism,
	}
	if a.env.Epoch != nil {
		m.Epoch = a.env.Epoch()
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
	if l := a.env.Checkpoints.Latest(); l != nil {
		prev = l.Metadata
	}
	m.SetDelta(prev)
	return m
}

// reportCompleted reports c, p published: to the run's statistics, the log and Env.Events,
// with the keyed state size of every subtask as c holds it.
func (a *attempt) reportCompleted(p *pendingCheckpoint, c *checkpoint.Completed) {
	m, loc := c.Metadata, c.Location
	if a.env.Stats != nil {
		a.env.Stats.Checkpoints++
		a.env.Stats.CheckpointDurations = append(a.env.Stats.CheckpointDurations, time.Since(p.started))
	}
	a.log.Info("checkpoint complete", "id", p.b.id, "savepoint", p.savepoint(), "pointer", loc.ExternalPointer,
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
}

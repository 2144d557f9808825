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

// coordinator is the checkpoint coordinator of one attempt: it triggers periodic
// checkpoints, collects acknowledgements, completes checkpoints by publishing their
// metadata through the storage, and aborts those that fail or expire.
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
//
// attempt.coordinate waits for the coordinator's events and hands each to its method (the
// on... methods); only that loop's goroutine touches the coordinator.
type coordinator struct {
	a             *attempt
	env           *Env
	maxConcurrent int                          // checkpoints in flight at once, at most
	expected      int                          // acknowledgements that complete a checkpoint
	pending       map[int64]*pendingCheckpoint // the checkpoints in flight, by id
	queued        []*SavepointRequest          // savepoints waiting until none is in flight
	sourcesDone   int                          // source subtasks whose input ended
	failures      int                          // consecutive failed checkpoints
	finalDone     bool                         // the final checkpoint completed
	lastCompleted time.Time                    // when the last checkpoint completed; zero: none yet
	ticker        *time.Ticker                 // the periodic triggers; nil without Env.Interval
	pause         *time.Timer                  // fires when the min-pause is over
	// retry fires after a checkpoint could not even start (its location was not set up),
	// so that a final checkpoint, which no tick triggers, is tried again.
	retry    *time.Timer
	deferred bool // a periodic trigger waits for the min-pause
}

// savepoint reports whether p is a savepoint: requested, and not as a checkpoint.
func (p *pendingCheckpoint) savepoint() bool { return p.request != nil && !p.request.Checkpoint }

// newCoordinator returns the coordinator of attempt a, its timers stopped and its ticker,
// if any, running.
func newCoordinator(a *attempt) *coordinator {
	c := &coordinator{
		a: a, env: a.env, maxConcurrent: max(1, a.env.MaxConcurrent),
		expected: a.job.Parallelism * len(a.job.stages),
		pending:  map[int64]*pendingCheckpoint{}, pause: stoppedTimer(), retry: stoppedTimer(),
	}
	if a.env.Interval > 0 {
		c.ticker = time.NewTicker(a.env.Interval)
	}
	return c
}

// stoppedTimer returns a timer that fires only once it is Reset.
func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// coordinate runs the checkpoint coordinator of the attempt (see coordinator). It returns
// when the job finished (nil) or must fail over (the error).
func (a *attempt) coordinate(ctx context.Context, tasksDone <-chan struct{}) error {
	c := newCoordinator(a)
	defer c.close()
	ticks := c.ticks()
	for {
		oldest, expiry := c.oldest()
		var err error
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tasksDone:
			return c.onTasksDone()
		case <-ticks:
			err = c.onTick(ctx)
		case <-c.retry.C:
			err = c.next(ctx)
		case <-c.pause.C:
			err = c.onPauseOver(ctx)
		case req := <-a.env.Savepoints:
			err = c.onSavepoint(ctx, &req)
		case <-a.sourceDone:
			err = c.onSourceDone(ctx)
		case <-expiry:
			err = c.onExpiry(ctx, oldest)
		case x := <-a.acks:
			err = c.onAck(ctx, x)
		}
		if err != nil {
			return err
		}
	}
}

// close ends the coordinator: it aborts the checkpoints in flight, fails the savepoint
// requests still queued and stops its timers.
func (c *coordinator) close() {
	for _, p := range c.pending {
		c.a.abort(p, errors.New("job stopped"))
	}
	for _, r := range c.queued {
		r.Reply <- SavepointResult{Err: errors.New("job stopped before the savepoint was taken")}
	}
	c.retry.Stop()
	c.pause.Stop()
	if c.ticker != nil {
		c.ticker.Stop()
	}
}

// ticks returns the channel of the periodic triggers; nil (never) without Env.Interval.
func (c *coordinator) ticks() <-chan time.Time {
	if c.ticker == nil {
		return nil
	}
	return c.ticker.C
}

// oldest returns the oldest checkpoint in flight and the channel its deadline fires on;
// with none in flight, nil and a channel that never fires.
func (c *coordinator) oldest() (*pendingCheckpoint, <-chan time.Time) {
	var oldest *pendingCheckpoint
	for _, p := range c.pending {
		if oldest == nil || p.b.id < oldest.b.id {
			oldest = p
		}
	}
	if oldest == nil {
		return nil, nil
	}
	return oldest, oldest.deadline.C
}

// onTasksDone answers the end of every subtask: the job finished if its final checkpoint
// completed; before that, the subtasks' end fails the attempt.
func (c *coordinator) onTasksDone() error {
	if c.finalDone {
		return nil
	}
	return errors.New("tasks stopped before the job finished")
}

// onTick answers the periodic ticker: a periodic checkpoint, unless one already waits for
// the min-pause.
func (c *coordinator) onTick(ctx context.Context) error {
	if c.deferred {
		return nil
	}
	return c.periodic(ctx)
}

// onPauseOver answers the end of the min-pause: the periodic checkpoint it deferred.
func (c *coordinator) onPauseOver(ctx context.Context) error {
	if !c.deferred {
		return nil
	}
	return c.periodic(ctx)
}

// onSavepoint answers a savepoint request: refused once the job finished; a drain ends the
// sources' input (its savepoint is the final checkpoint); any other waits in the queue
// until no checkpoint is in flight.
func (c *coordinator) onSavepoint(ctx context.Context, req *SavepointRequest) error {
	switch {
	case c.finalDone:
		req.Reply <- SavepointResult{Err: errors.New("the job has finished")}
		return nil
	case req.Drain:
		if err := c.a.startDrain(req); err != nil {
			req.Reply <- SavepointResult{Err: err}
			return nil
		}
	default:
		c.queued = append(c.queued, req)
	}
	return c.next(ctx)
}

// onSourceDone counts a source subtask whose input ended; once every one did, the final
// checkpoint follows.
func (c *coordinator) onSourceDone(ctx context.Context) error {
	c.sourcesDone++
	return c.next(ctx)
}

// onExpiry fails p, the oldest checkpoint in flight, whose
// execution.checkpointing.timeout passed.
func (c *coordinator) onExpiry(ctx context.Context, p *pendingCheckpoint) error {
	return c.fail(ctx, p, fmt.Errorf("checkpoint %d expired after %s (execution.checkpointing.timeout) with %d of %d subtasks acknowledged",
		p.b.id, c.env.Timeout, p.acks, c.expected))
}

// onAck answers a subtask's acknowledgement: a late one, of a checkpoint aborted, has its
// uploads discarded; a declined one fails its checkpoint; the last one of a checkpoint
// completes it.
func (c *coordinator) onAck(ctx context.Context, x ack) error {
	p := c.pending[x.id]
	switch {
	case p == nil:
		c.a.discardShared(x.states) // late answer to an aborted checkpoint
		return nil
	case x.err != nil:
		return c.fail(ctx, p, fmt.Errorf("checkpoint %d declined: %w", p.b.id, x.err))
	}
	p.states = append(p.states, x.states...)
	c.a.acknowledged(x)
	if p.acks++; p.acks < c.expected {
		return nil
	}
	return c.onAllAcked(ctx, p)
}

// onAllAcked completes p, which every subtask acknowledged: it publishes p, which
// subsumes the older checkpoints in flight, finishes the job when p is the final
// checkpoint, answers p's savepoint request (a stop-with-savepoint ends the attempt:
// errStopped) and triggers what waited for p.
func (c *coordinator) onAllAcked(ctx context.Context, p *pendingCheckpoint) error {
	delete(c.pending, p.b.id)
	p.deadline.Stop()
	done, err := c.a.complete(ctx, p)
	if err != nil {
		return c.fail(ctx, p, err)
	}
	c.failures, c.lastCompleted = 0, time.Now()
	c.subsume(p)
	if p.final {
		c.finalDone = true
		close(c.a.finish)
	}
	switch {
	case p.request != nil && p.final:
		c.a.drained = &done.Location // Run replies once the sinks committed it
	case p.request != nil:
		p.request.Reply <- SavepointResult{Location: done.Location}
		if p.request.Stop {
			return errStopped
		}
	}
	return c.next(ctx)
}

// subsume aborts the checkpoints older than p still in flight, savepoints aside: p's
// completion subsumes them (not a failure).
func (c *coordinator) subsume(p *pendingCheckpoint) {
	for id, older := range c.pending {
		if id < p.b.id && older.request == nil {
			delete(c.pending, id)
			c.a.abort(older, fmt.Errorf("checkpoint %d subsumed by checkpoint %d", id, p.b.id))
		}
	}
}

// periodic triggers a periodic checkpoint when one may start now, deferring it when only
// the min-pause holds it back.
func (c *coordinator) periodic(ctx context.Context) error {
	c.deferred = false
	if len(c.pending) >= c.maxConcurrent || len(c.queued) > 0 || c.finalDone || c.sourcesDone == c.a.job.Parallelism || c.a.drainReq != nil {
		return nil
	}
	if wait := time.Until(c.lastCompleted.Add(c.env.MinPause)); c.env.MinPause > 0 && !c.lastCompleted.IsZero() && wait > 0 {
		c.deferred = true
		c.pause.Reset(wait)
		return nil
	}
	return c.trigger(ctx, false, nil)
}

// next triggers what waits until no checkpoint is in flight: the oldest queued savepoint,
// else, once every source's input ended, the final checkpoint.
func (c *coordinator) next(ctx context.Context) error {
	if len(c.pending) > 0 || c.finalDone {
		return nil
	}
	if len(c.queued) > 0 {
		req := c.queued[0]
		c.queued = c.queued[1:]
		return c.trigger(ctx, false, req)
	}
	if c.sourcesDone == c.a.job.Parallelism {
		return c.trigger(ctx, true, c.a.drainReq) // a drain's final checkpoint is its savepoint
	}
	return nil
}

// trigger starts a checkpoint, the job's final one if final, req's savepoint if req is
// set: it sets up the checkpoint's location and sends its barrier to every source subtask.
func (c *coordinator) trigger(ctx context.Context, final bool, req *SavepointRequest) error {
	a := c.a
	id := c.env.Checkpoints.NextID()
	p := &pendingCheckpoint{started: time.Now(), final: final, request: req}
	a.events.CheckpointTriggered(id, kindOf(req), p.started)
	var err error
	if p.loc, err = c.initLocation(ctx, id, req, p.started); err != nil {
		return c.notStarted(id, final, req, err)
	}
	full := c.env.FullFirstCheckpoint && a.completed.Load() == a.restoredID
	uploaded := func(n int64) { a.events.CheckpointUploaded(id, n) }
	streams := checkpoint.Checksummed(p.loc, uploaded)
	if !p.savepoint() { // a checkpoint may reference the backends' files in place, a savepoint never
		streams = c.env.Checkpoints.Adopting(streams)
	}
	p.b = &barrier{id: id, savepoint: p.savepoint(), full: full, streams: streams, triggered: p.started}
	p.deadline = time.NewTimer(time.Until(p.started.Add(c.env.Timeout)))
	c.pending[id] = p
	a.log.Debug("triggering checkpoint", "id", id, "savepoint", p.savepoint(), "final", final, "full", full, "in_flight", len(c.pending))
	for _, s := range a.sources {
		select {
		case s.triggers <- p.b:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// kindOf returns the kind of the checkpoint that serves req (nil: a checkpoint).
func kindOf(req *SavepointRequest) CheckpointKind {
	switch {
	case req == nil || req.Checkpoint:
		return KindCheckpoint
	case req.Stop:
		return KindSyncSavepoint
	}
	return KindSavepoint
}

// initLocation sets up the location of checkpoint id, triggered at started: req's
// savepoint directory when req is set. Setting up the location is part of the checkpoint:
// a storage that hangs here must not stall the coordinator past
// execution.checkpointing.timeout.
func (c *coordinator) initLocation(ctx context.Context, id int64, req *SavepointRequest, started time.Time) (sdk.CheckpointStorageLocation, error) {
	access := c.env.Checkpoints.Access()
	ictx, cancel := context.WithDeadline(ctx, started.Add(c.env.Timeout))
	defer cancel()
	var loc sdk.CheckpointStorageLocation
	var err error
	if req != nil && !req.Checkpoint {
		loc, err = access.InitializeLocationForSavepoint(ictx, id, req.Target)
	} else {
		loc, err = access.InitializeLocationForCheckpoint(ictx, id)
	}
	switch {
	case err == nil:
		return loc, nil
	case ictx.Err() != nil && ctx.Err() == nil:
		return nil, fmt.Errorf("checkpoint %d expired after %s (execution.checkpointing.timeout) while its location was initialized: %w", id, c.env.Timeout, err)
	}
	return nil, fmt.Errorf("checkpoint %d: initialize location: %w", id, err)
}

// notStarted answers checkpoint id, whose location could not be set up (err): it is tried
// again after retryDelay when nothing else triggers it; a savepoint request, but a drain's
// final one, gets the error; anything else counts as a failed checkpoint.
func (c *coordinator) notStarted(id int64, final bool, req *SavepointRequest, err error) error {
	c.retry.Reset(retryDelay)
	c.a.events.CheckpointFailed(id, time.Now(), err.Error())
	if req != nil && !final { // a drain's final savepoint is tried again
		req.Reply <- SavepointResult{Err: err}
		return nil
	}
	return c.failed(err)
}

// fail aborts p, a checkpoint in flight that will not complete, counts the failure and
// triggers what waited for p.
func (c *coordinator) fail(ctx context.Context, p *pendingCheckpoint, err error) error {
	delete(c.pending, p.b.id)
	c.a.abort(p, err)
	if err := c.failed(err); err != nil {
		return err
	}
	return c.next(ctx)
}

// failed counts a failed checkpoint and returns an error once the consecutive failures
// exceed the tolerable number.
func (c *coordinator) failed(err error) error {
	c.failures++
	if c.env.Stats != nil {
		c.env.Stats.FailedCheckpoints++
	}
	if c.failures > c.env.TolerableFailures {
		return fmt.Errorf("%w; %d consecutive failed checkpoints exceed execution.checkpointing.tolerable-failed-checkpoints (%d)", err, c.failures, c.env.TolerableFailures)
	}
	c.a.log.Warn("checkpoint failed", "error", err, "consecutive", c.failures, "tolerable", c.env.TolerableFailures)
	return nil
}

// retryDelay is how long the coordinator waits before it tries again to start a
// checkpoint whose location could not be set up.
const retryDelay = 100 * time.Millisecond

// errStopped ends an attempt after a stop-with-savepoint.
var errStopped = errors.New("job stopped with a savepoint")

// IsStopped reports whether Run ended because the job was stopped with a savepoint.
func IsStopped(err error) bool { return errors.Is(err, errStopped) }

package dataflow

import (
	"context"
	"sync"
	"sync/atomic"
)

// The exchange between two stages.
//
// Every keyed subtask has one inbox, a buffered channel that all p subtasks of the stage
// before it send into, so an attempt holds p inboxes per keyed stage, not p*p channels,
// and a subtask receives with one channel operation whatever the parallelism.
//
// Exactly-once alignment without a channel per edge. A barrier with id n from sender i
// must be the last thing the receiver j takes from i before j's snapshot of n, yet j keeps
// reading its inbox, where the other senders' records still arrive. So the sender holds
// back instead of the receiver: once sender i has sent barrier n to j, it sends j nothing
// (record, barrier or end of stream) until j has aligned n, that is received barrier n
// from every input that has not ended. Every receiver publishes the newest barrier it
// aligned (inbox.aligned); a sender remembers the newest barrier it sent (output.sent)
// and, before each send to j, waits until j's aligned id caught up. A sender sends a
// barrier to every receiver (output.broadcast) before any record that follows it.
//
// Consequences:
//
//   - Every message in an inbox can be taken at once: records from inputs whose barrier
//     has not arrived, barriers, ends. The receiver never leaves its inbox unread while it
//     waits for a barrier; it stops reading only while it processes what it took in.
//   - Each sender sends each barrier once to each receiver, in increasing id order, so the
//     receiver counts barriers instead of remembering which input sent one (no per-input
//     state): alignment of n is complete when barrier n came from every input that has
//     not ended (see stageTask.arrive).
//   - The receiver publishes aligned = n as soon as the count is complete, before it
//     processes the batches it took in and takes its snapshot: what senders send from
//     then on waits in the inbox until the snapshot is taken, since a subtask does one
//     thing at a time.
//
// Deadlock freedom. Say a subtask is "before n" until it has sent barrier n on (a source:
// until it was triggered with n and sent it). A subtask before n has sent at most barrier
// n-1, so every send it makes waits only for (a) a receiver to have aligned at most n-1,
// or (b) room in a receiver's inbox. Every wait therefore points either to an older
// barrier or downstream:
//
//   - (a) A receiver r aligns n-1 once every sender of r sent n-1; a sender that has not
//     is before n-1, and by the same reasoning waits only for barriers older than n-1 or
//     for room downstream. Induction on the barrier id (the first barrier waits for no
//     alignment at all) shows every barrier is eventually aligned everywhere.
//   - (b) A receiver whose inbox is full is processing what it took in, and its own sends
//     go one stage further downstream. The last stage writes into the sink and never waits
//     for another subtask, so a chain of full inboxes always ends at a subtask that makes
//     progress. A sender s before n that waits for room in r's inbox has not sent r
//     barrier n (a broadcast reaches each receiver once, and records follow it only after
//     the whole broadcast), so r cannot have aligned n: r is before n too, and the
//     argument applies to r.
//
// A sender blocked on one receiver may keep a barrier from the receivers after it in
// its broadcast, but what it waits for is an older alignment or room downstream, never
// the alignment of the barrier it holds back, so no cycle forms.
//
// Ends of stream follow the same rule, and they come only after the final checkpoint has
// completed, that is after every subtask aligned every barrier; a receiver counts an
// ended input as aligned. Aborted checkpoints: the coordinator aborts checkpoint n only
// before every subtask acknowledged it, and triggers n+1 only after n completed or was
// aborted. A receiver that learns n was aborted (stageTask.release) while aligning it
// ends the alignment at once without a snapshot: it publishes aligned = n and sends
// barrier n on, so every subtask still sends every barrier once and in order, and later
// copies of barrier n are ignored (id <= aligned). A barrier n+1 reaching a receiver that
// still aligns n is impossible in exactly-once mode (its sender waited for n to be
// aligned); in at-least-once mode it means n was aborted, and the receiver releases n
// the same way.
//
// At-least-once mode (Env.AtLeastOnce) drops the senders' wait, so records that follow
// a barrier may be processed before the receiver's snapshot; the receiver still counts
// barriers and snapshots once barrier n arrived from every input. Cancelling the
// attempt's context ends every wait: each channel send and receive, and every wait for
// an alignment, also selects on ctx.Done().

// inboxCap is the capacity of an inbox in messages (batches, barriers, ends).
const inboxCap = 4

// inbox is a keyed subtask's input.
type inbox struct {
	ch chan message
	// aligned is the newest barrier id this subtask aligned (or released, see
	// stageTask.release). Only the subtask writes it, through align.
	aligned atomic.Int64
	mu      sync.Mutex
	wake    chan struct{} // closed by align; nil while no sender waits
}

func newInbox() *inbox { return &inbox{ch: make(chan message, inboxCap)} }

// align publishes that barrier id is aligned and wakes the senders waiting for it.
func (in *inbox) align(id int64) {
	in.mu.Lock()
	in.aligned.Store(id)
	if in.wake != nil {
		close(in.wake)
		in.wake = nil
	}
	in.mu.Unlock()
}

// waitAligned returns once barrier id is aligned, or ctx ended.
func (in *inbox) waitAligned(ctx context.Context, id int64) error {
	for in.aligned.Load() < id {
		in.mu.Lock()
		if in.aligned.Load() >= id {
			in.mu.Unlock()
			return nil
		}
		if in.wake == nil {
			in.wake = make(chan struct{})
		}
		wake := in.wake
		in.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// put sends m into the inbox, or returns when ctx ends.
func (in *inbox) put(ctx context.Context, m message) error {
	select {
	case in.ch <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

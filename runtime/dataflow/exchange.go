package dataflow

import (
	"context"
	"math"
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
// more (record, barrier or end of stream) until j has aligned n, that is has barrier n
// from every input. Every receiver publishes the newest barrier it aligned
// (inbox.aligned); a sender remembers the newest barrier it sent (output.sent) and, before
// each send to j, waits until j's aligned id caught up. A sender sends a barrier to every
// receiver (output.broadcast) before any record that follows it.
//
// Passing a barrier without a message. A barrier must reach j behind what its sender sent
// j before it. A sender that sent j no record since its previous barrier has nothing in
// j's inbox for the barrier to follow, so it passes the barrier to j directly
// (inbox.pass): under j's lock it counts one input less missing for the barrier after j's
// aligned one. A sender that did send j records since sends the barrier as a message
// behind them, and j counts it when it takes it (inbox.arrived). A checkpoint still takes
// p*p such steps per stage boundary, but only the pairs that exchanged records since the
// previous one cost a message. A pass is only right when j took everything the sender
// sent it, which j's aligning the sender's previous barrier proves, but not its
// releasing it (see Aborted checkpoints): so a sender also sends the barrier as a message
// while the newest barrier message it sent j (output.behind) is newer than the newest
// barrier j settled (inbox.settledID), that is aligned with every input's barrier taken.
//
// Consequences:
//
//   - Every message in an inbox can be taken at once: records from inputs whose barrier
//     has not arrived, and barriers. The receiver never leaves its inbox unread while it
//     waits for a barrier; it stops reading only while it processes what it took in.
//   - Each sender passes each barrier once to each receiver, in increasing id order, and
//     passes barrier n to j only after j aligned the sender's previous one. So everything
//     j counts after aligning m is for the one barrier that follows m: a count of the
//     inputs still missing suffices, with no state per input. A copy of a barrier j
//     aligned or released already (id <= aligned) is not counted.
//   - When the count reaches zero every barrier message has been taken, and with it every
//     record sent before it. The receiver publishes aligned = n at once, before it
//     processes the batches it took in and takes its snapshot: what senders send from then
//     on waits in the inbox until the snapshot is taken, as a subtask does one thing at a
//     time.
//
// Deadlock freedom. Say a subtask is "before n" until it has passed barrier n on (a
// source: until it was triggered with n and passed it). A subtask before n has passed at
// most barrier n-1, so every send it makes waits only for (a) a receiver to have aligned
// at most n-1, or (b) room in a receiver's inbox (a pass without a message needs no room).
// Every wait therefore points either to an older barrier or downstream:
//
//   - (a) A receiver r aligns n-1 once every sender of r passed n-1; a sender that has not
//     is before n-1, and by the same reasoning waits only for barriers older than n-1 or
//     for room downstream. Induction on the barrier id (the first barrier waits for no
//     alignment at all) shows every barrier is eventually aligned everywhere.
//   - (b) A receiver whose inbox is full is processing what it took in, and its own sends
//     go one stage further downstream. The last stage writes into the sink and never waits
//     for another subtask, so a chain of full inboxes always ends at a subtask that makes
//     progress. A sender s before n that waits for room in r's inbox has not passed r
//     barrier n (a broadcast reaches each receiver once, and records follow it only after
//     the whole broadcast), so r cannot have aligned n: r is before n too, and the
//     argument applies to r.
//
// A sender blocked on one receiver may keep a barrier from the receivers after it in its
// broadcast, but what it waits for is an older alignment or room downstream, never the
// alignment of the barrier it holds back, so no cycle forms.
//
// Aborted checkpoints. The coordinator aborts checkpoint n only before every subtask
// acknowledged it, and triggers n+1 only after n completed or was aborted. A receiver
// that learns n was aborted while aligning it (stageTask.releaseAborted) ends the
// alignment at once without a snapshot: it publishes aligned = n and passes barrier n
// on, so every subtask still passes every barrier once and in order, and the copies of n
// that come later are not counted. A released n is not settled: a sender's message n,
// and the records before it, may still be in the inbox or not even sent, so that sender
// sends n+1 as a message behind them. Were n+1 passed, it could complete the alignment
// of n+1 before j took those records, and the snapshot of n+1 would lack records that
// precede its barriers. A barrier n+1 reaching a receiver that still aligns n
// is impossible in exactly-once mode (its sender waited for n to be aligned); in
// at-least-once mode it means n was aborted, and the receiver releases n the same way.
//
// At-least-once mode (Env.AtLeastOnce) drops the senders' wait, so records that follow a
// barrier may be processed before the receiver's snapshot; the receiver still snapshots
// once barrier n came from every input. Without the wait, passes of two barriers could
// overlap, so at-least-once senders send every barrier as a message, which the receiver
// checks by id.
//
// The end of a stream is a barrier with the largest id (endOfStream), passed like the
// others, in both modes. Ends come only after the final checkpoint completed, when every
// receiver has aligned every barrier, so they never meet an alignment; a receiver
// finishes once the end came from every input.
//
// Cancelling the attempt's context ends every wait: each channel send and receive, and
// every wait for an alignment, also selects on ctx.Done().

// inboxCap is the capacity of an inbox in messages (batches and barriers): as much as a
// subtask of a job at parallelism 2 could hold before, in two channels of 4, which keeps
// a leveldb job's bursts of slow batches from stalling its sources.
const inboxCap = 8

// endOfStream is the barrier that ends a stream.
var endOfStream = &barrier{id: math.MaxInt64}

// inbox is a keyed subtask's input.
type inbox struct {
	ch chan message
	// ready is signalled by the first and the last pass of a barrier (see pass).
	ready chan struct{}
	// alignedID is aligned, for the senders' wait without the lock.
	alignedID atomic.Int64
	// settledID is the newest barrier aligned, not released: the subtask took it from
	// every input, so no message sent before it is left in the inbox (see output.behind).
	settledID atomic.Int64
	mu        sync.Mutex
	aligned   int64         // the newest barrier aligned or released; written by the subtask
	missing   int           // inputs that have not passed the barrier after aligned
	next      *barrier      // that barrier, once an input passed it without a message
	wake      chan struct{} // closed when aligned advances; nil while no sender waits
}

func newInbox(inputs int) *inbox {
	return &inbox{ch: make(chan message, inboxCap), ready: make(chan struct{}, 1), missing: inputs}
}

// align makes barrier id aligned (settled) or released (not settled), expects the next
// barrier from inputs inputs, and wakes the senders waiting for it.
func (in *inbox) align(id int64, inputs int, settled bool) {
	in.mu.Lock()
	in.aligned, in.missing, in.next = id, inputs, nil
	in.alignedID.Store(id)
	if settled {
		in.settledID.Store(id)
	}
	if in.wake != nil {
		close(in.wake)
		in.wake = nil
	}
	in.mu.Unlock()
}

// pass counts barrier b for one input that sends no message for it. The first pass of
// a barrier signals ready (the subtask releases the alignment of an aborted checkpoint
// once it knows of it), and so does the pass that completes it.
func (in *inbox) pass(b *barrier) {
	in.mu.Lock()
	if b.id <= in.aligned {
		in.mu.Unlock()
		return
	}
	first := in.next == nil
	in.next = b
	in.missing--
	done := in.missing == 0
	in.mu.Unlock()
	if first || done {
		select {
		case in.ready <- struct{}{}:
		default:
		}
	}
}

// arrived counts a barrier the subtask took from the inbox, one that follows the aligned
// barrier, and reports whether every input has passed it now.
func (in *inbox) arrived() bool {
	in.mu.Lock()
	in.missing--
	done := in.missing == 0
	in.mu.Unlock()
	return done
}

// passed returns the barrier after the aligned one that some input passed without a
// message, and whether every input passed it.
func (in *inbox) passed() (*barrier, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.next, in.next != nil && in.missing == 0
}

// waitAligned returns once barrier id is aligned, or ctx ended.
func (in *inbox) waitAligned(ctx context.Context, id int64) error {
	for in.alignedID.Load() < id {
		in.mu.Lock()
		if in.aligned >= id {
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

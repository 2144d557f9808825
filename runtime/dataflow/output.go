package dataflow

import (
	"context"
	"sync"

	"github.com/flowstate/flowstate/runtime/state"
)

// message is what flows between subtasks: a batch of records with their keys, or a
// barrier (endOfStream ends the stream).
type message struct {
	recs    []any
	keys    [][]byte
	groups  []int // the key group of each key, computed for routing
	barrier *barrier
}

// sendLimitBatches bounds what a subtask buffers for the next stage: at most
// min(p, sendLimitBatches) batches' worth of records in all, whatever the parallelism, so
// that the buffers of a stage grow linearly with it. At a parallelism up to this limit
// every receiver still gets full batches.
const sendLimitBatches = 2

// output routes a subtask's records: to the next stage's subtasks by key group, or into
// the sink when the subtask is in the last stage.
type output struct {
	next  []*inbox // the next stage's subtasks; nil in the last stage
	exact bool     // wait for alignment before sending (exactly once; see exchange.go)
	sent  int64    // the newest barrier sent
	// touched holds the receivers sent records since the last barrier: they get the next
	// barrier as a message behind those records, the others without one.
	touched map[int]struct{}
	// behind holds, per receiver, the newest barrier sent to it as a message. A later
	// barrier passes without a message only once the receiver settled that one: a receiver
	// that released an aborted checkpoint's alignment may not have taken the message yet,
	// nor the records before it, and a pass would overtake them.
	behind []int64
	first  int // the receiver a broadcast starts with, to spread the senders' passes
	keyOf  func(any) []byte
	maxP   int
	batch  int
	limit  int // records buffered in all before every buffer is sent
	// open holds a buffer per receiver that has records buffered since the last flush;
	// index finds a receiver's buffer. Only receivers written to take memory.
	open     []routed
	index    map[int]int
	buffered int
	hint     int // the size of the last batch sent, to size new buffers
	sink     SinkWriter
	err      error
	emitted  int // records emitted, for the record counts
}

// routed is a batch being gathered for one receiver.
type routed struct {
	to int
	m  message
}

// newOutput returns the output of subtask idx: into next, or into sink when next is nil.
func newOutput(idx int, next []*inbox, exact bool, keyOf func(any) []byte, maxP, batch int, sink SinkWriter) *output {
	o := &output{next: next, exact: exact, touched: map[int]struct{}{}, behind: make([]int64, len(next)), keyOf: keyOf, maxP: maxP,
		batch: batch, limit: batch * min(len(next), sendLimitBatches), index: map[int]int{}, hint: 16, sink: sink}
	if len(next) > 0 {
		o.first = idx % len(next)
	}
	return o
}

// emit routes one record. Errors are kept and reported by the caller after the batch.
func (o *output) emit(ctx context.Context, rec any) {
	if o.err != nil {
		return
	}
	o.emitted++
	if o.sink != nil {
		o.err = o.sink.Write(rec)
		return
	}
	key := o.keyOf(rec)
	g := state.KeyGroupFor(key, o.maxP)
	t := state.SubtaskForKeyGroup(o.maxP, len(o.next), g)
	i, ok := o.index[t]
	if !ok {
		i = len(o.open)
		o.index[t] = i
		o.open = append(o.open, routed{to: t})
	}
	b := &o.open[i].m
	if b.recs == nil {
		*b = newBatch(min(o.hint, o.batch))
	}
	b.recs = append(b.recs, rec)
	b.keys = append(b.keys, key)
	b.groups = append(b.groups, g)
	o.buffered++
	switch {
	case len(b.recs) >= o.batch:
		o.err = o.send(ctx, i)
	case o.buffered >= o.limit:
		o.err = o.flush(ctx)
	}
}

// send sends the batch gathered in open[i].
func (o *output) send(ctx context.Context, i int) error {
	r := &o.open[i]
	m := r.m
	if len(m.recs) == 0 {
		return nil
	}
	r.m = message{}
	o.buffered -= len(m.recs)
	o.hint = len(m.recs)
	o.touched[r.to] = struct{}{}
	return o.put(ctx, r.to, m)
}

// put sends m to receiver t once t may take it (see waitFor).
func (o *output) put(ctx context.Context, t int, m message) error {
	if err := o.waitFor(ctx, t); err != nil {
		return err
	}
	return o.next[t].put(ctx, m)
}

// waitFor returns, in exactly-once mode, once receiver t aligned the newest barrier sent
// to it.
func (o *output) waitFor(ctx context.Context, t int) error {
	if !o.exact {
		return nil
	}
	return o.next[t].waitAligned(ctx, o.sent)
}

// flush sends every buffered batch.
func (o *output) flush(ctx context.Context) error {
	if o.err != nil {
		return o.err
	}
	for i := range o.open {
		if err := o.send(ctx, i); err != nil {
			return err
		}
	}
	o.open = o.open[:0]
	clear(o.index)
	return nil
}

// broadcast flushes, then passes barrier b (or endOfStream) to every next-stage subtask:
// as a message to those sent records since the last barrier or that may still hold a
// barrier message (behind), and to all in at-least-once mode (but the end); by inbox.pass
// to the others (see exchange.go).
func (o *output) broadcast(ctx context.Context, b *barrier) error {
	if err := o.flush(ctx); err != nil {
		return err
	}
	n := len(o.next)
	for i := range n {
		t := (o.first + i) % n
		if err := o.waitFor(ctx, t); err != nil {
			return err
		}
		_, touched := o.touched[t]
		if touched || o.behind[t] > o.next[t].settledID.Load() || !o.exact && b != endOfStream {
			o.behind[t] = b.id
			if err := o.next[t].put(ctx, message{barrier: b}); err != nil {
				return err
			}
			continue
		}
		o.next[t].pass(b)
	}
	clear(o.touched)
	o.sent = b.id
	return nil
}

// batches recycles the slices of the batches that cross between stages: a receiver hands
// a batch's back once it has processed it (releaseBatch), so a running job's senders
// take those instead of allocating new ones, about 48 bytes per record.
var batches sync.Pool // of *message, its barrier nil and its slices empty

// newBatch returns an empty batch of records, from the pool when it has one; n is the
// capacity a new one gets.
func newBatch(n int) message {
	if m, ok := batches.Get().(*message); ok {
		return *m
	}
	return message{recs: make([]any, 0, n), keys: make([][]byte, 0, n), groups: make([]int, 0, n)}
}

// releaseBatch hands the slices of m, a batch of records its receiver is done with, back
// for reuse; they keep no reference to its records or keys.
func releaseBatch(m message) {
	if m.barrier != nil || cap(m.recs) == 0 {
		return
	}
	clear(m.recs)
	clear(m.keys)
	batches.Put(&message{recs: m.recs[:0], keys: m.keys[:0], groups: m.groups[:0]})
}

// chainEmit composes stateless transformations in front of final.
func chainEmit(chain []link, final func(any), errp *error) func(any) {
	emit := final
	for i := len(chain) - 1; i >= 0; i-- {
		f := chain[i](emit)
		emit = func(rec any) {
			if err := f(rec); err != nil && *errp == nil {
				*errp = err
			}
		}
	}
	return emit
}

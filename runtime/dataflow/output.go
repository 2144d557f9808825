package dataflow

import (
	"context"

	"github.com/flowstate/flowstate/runtime/state"
)

// message is what flows between subtasks: a batch of records with their keys, a barrier,
// or the end of the stream.
type message struct {
	recs    []any
	keys    [][]byte
	groups  []int // the key group of each key, computed for routing
	barrier *barrier
	end     bool
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
	keyOf func(any) []byte
	maxP  int
	batch int
	limit int // records buffered in all before every buffer is sent
	// open holds a buffer per receiver that has records buffered since the last flush;
	// index finds a receiver's buffer. Only receivers written to take memory.
	open     []routed
	index    map[int]int
	buffered int
	hint     int // the size of the last batch sent, to size new buffers
	sink     SinkWriter
	err      error
}

// routed is a batch being gathered for one receiver.
type routed struct {
	to int
	m  message
}

func newOutput(next []*inbox, exact bool, keyOf func(any) []byte, maxP, batch int, sink SinkWriter) *output {
	return &output{next: next, exact: exact, keyOf: keyOf, maxP: maxP, batch: batch,
		limit: batch * min(len(next), sendLimitBatches), index: map[int]int{}, hint: 16, sink: sink}
}

// emit routes one record. Errors are kept and reported by the caller after the batch.
func (o *output) emit(ctx context.Context, rec any) {
	if o.err != nil {
		return
	}
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
		n := min(o.hint, o.batch)
		*b = message{recs: make([]any, 0, n), keys: make([][]byte, 0, n), groups: make([]int, 0, n)}
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
	return o.put(ctx, r.to, m)
}

// put sends m to receiver t, first waiting, in exactly-once mode, until t aligned the
// newest barrier sent to it.
func (o *output) put(ctx context.Context, t int, m message) error {
	in := o.next[t]
	if o.exact {
		if err := in.waitAligned(ctx, o.sent); err != nil {
			return err
		}
	}
	return in.put(ctx, m)
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

// broadcast flushes, then sends m, a barrier or the end of the stream, to every
// next-stage subtask.
func (o *output) broadcast(ctx context.Context, m message) error {
	if err := o.flush(ctx); err != nil {
		return err
	}
	for t := range o.next {
		if err := o.put(ctx, t, m); err != nil {
			return err
		}
	}
	if m.barrier != nil {
		o.sent = m.barrier.id
	}
	return nil
}

// chainEmit composes stateless transformations in front of final.
func chainEmit(chain []func(any, func(any)) error, final func(any), errp *error) func(any) {
	emit := final
	for i := len(chain) - 1; i >= 0; i-- {
		f, next := chain[i], emit
		emit = func(rec any) {
			if err := f(rec, next); err != nil && *errp == nil {
				*errp = err
			}
		}
	}
	return emit
}

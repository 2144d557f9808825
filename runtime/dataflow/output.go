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

// output routes a subtask's records: to the next stage's subtasks by key group, or into
// the sink when the subtask is in the last stage.
type output struct {
	chans []chan message // one per next-stage subtask
	keyOf func(any) []byte
	maxP  int
	batch int
	bufs  []message
	sink  SinkWriter
	err   error
}

func newOutput(chans []chan message, keyOf func(any) []byte, maxP, batch int, sink SinkWriter) *output {
	return &output{chans: chans, keyOf: keyOf, maxP: maxP, batch: batch, bufs: make([]message, len(chans)), sink: sink}
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
	t := state.SubtaskForKeyGroup(o.maxP, len(o.chans), g)
	b := &o.bufs[t]
	b.recs = append(b.recs, rec)
	b.keys = append(b.keys, key)
	b.groups = append(b.groups, g)
	if len(b.recs) >= o.batch {
		o.err = o.send(ctx, t)
	}
}

func (o *output) send(ctx context.Context, t int) error {
	m := o.bufs[t]
	if len(m.recs) == 0 {
		return nil
	}
	n := len(m.recs)
	o.bufs[t] = message{recs: make([]any, 0, n), keys: make([][]byte, 0, n), groups: make([]int, 0, n)}
	select {
	case o.chans[t] <- m:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush sends every buffered batch.
func (o *output) flush(ctx context.Context) error {
	if o.err != nil {
		return o.err
	}
	for t := range o.chans {
		if err := o.send(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// broadcast flushes, then sends m to every next-stage subtask.
func (o *output) broadcast(ctx context.Context, m message) error {
	if err := o.flush(ctx); err != nil {
		return err
	}
	for _, c := range o.chans {
		select {
		case c <- m:
		case <-ctx.Done():
			return ctx.Err()
		}
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

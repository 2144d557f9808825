package host

import (
	"context"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/prio"
)

// PipelinedWriter is implemented by the sdk.KeyedStateBackend a host gets for a keyed
// backend in a plugin process (Plugin.StateBackend), and by LocalPipeline's. Plugins do not
// implement it: the SDK serves it for every backend, calling Write and Get one at a time.
//
// StartWrite sends a batch of mutations and returns before the plugin has applied it, so
// that several batches are in flight across the process boundary at once, as Flink 2.0's
// asynchronous state access keeps many requests in flight. Batches apply in the order they
// were started, each after the one before; once one fails none after it is applied. wait
// returns the batch's error (or that of a batch before it that failed) when the plugin has
// answered, or ctx's error when ctx ends first.
//
// StartRead starts reading keys and returns before the plugin has answered; wait returns
// their values in order, nil for an absent key. The caller promises that no write started
// before the read, and none started before wait returns, touches those keys. The read may
// then be answered ahead of the writes in flight, and a plugin of this SDK answers it
// before the writes it has not begun yet: a subtask that needs state it has not seen
// waits for one write at most, not for all of them.
//
// The usual rule of sdk.KeyedStateBackend holds: one goroutine at a time. Every wait must
// have returned before any method other than StartWrite and StartRead is called.
type PipelinedWriter interface {
	StartWrite(ctx context.Context, mutations []sdk.Mutation) (wait func() error)
	StartRead(ctx context.Context, keys [][]byte) (wait func() ([][]byte, error))
}

// LocalPipeline returns a PipelinedWriter for kb, a keyed backend in the host's own
// process, scheduled as the SDK schedules one in a plugin process: writes apply in order,
// each on a goroutine of its own after the one before; a read goes before the writes not
// begun yet; calls into kb are one at a time. The caller keeps kb's other methods for when
// every wait has returned.
func LocalPipeline(kb sdk.KeyedStateBackend) PipelinedWriter { return &localPipeline{kb: kb} }

// localPipeline is the PipelinedWriter LocalPipeline returns.
type localPipeline struct {
	kb   sdk.KeyedStateBackend
	mu   prio.Mutex
	last *localWrite // the newest write started
}

// localWrite is a write of a localPipeline: err is set before done is closed.
type localWrite struct {
	done chan struct{}
	err  error
}

func (l *localPipeline) StartWrite(ctx context.Context, mutations []sdk.Mutation) (wait func() error) {
	w := &localWrite{done: make(chan struct{})}
	prev := l.last
	l.last = w
	go func() {
		defer close(w.done)
		if prev != nil {
			<-prev.done
			if prev.err != nil {
				w.err = prev.err // the backend may hold part of it: write nothing more
				return
			}
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		w.err = l.kb.Write(ctx, mutations)
	}()
	return func() error {
		<-w.done
		return w.err
	}
}

func (l *localPipeline) StartRead(ctx context.Context, keys [][]byte) (wait func() ([][]byte, error)) {
	var vals [][]byte
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.mu.LockUrgent()
		defer l.mu.Unlock()
		vals, err = l.kb.Get(ctx, keys)
	}()
	return func() ([][]byte, error) {
		<-done
		return vals, err
	}
}

package state

import (
	"context"

	"github.com/flowstate/flowstate/internal/prio"
	"github.com/flowstate/flowstate/sdk"
)

// localPipeline is the sdk.PipelinedWriter of a keyed backend in the runner's own process,
// scheduled as the SDK schedules one in a plugin process: writes apply in order, each on a
// goroutine of its own after the one before; a read goes before the writes not begun yet;
// calls into the backend are one at a time.
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

var _ sdk.PipelinedWriter = (*localPipeline)(nil)

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

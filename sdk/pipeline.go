package sdk

import "context"

// PipelinedWriter is implemented by the KeyedStateBackend a host gets for a keyed backend
// in a plugin process (see package sdk/host). Plugin authors do not implement it: the SDK
// serves it for every backend, calling Write and Get one at a time.
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
// The usual rule of KeyedStateBackend holds: one goroutine at a time. Every wait must have
// returned before any method other than StartWrite and StartRead is called.
type PipelinedWriter interface {
	StartWrite(ctx context.Context, mutations []Mutation) (wait func() error)
	StartRead(ctx context.Context, keys [][]byte) (wait func() ([][]byte, error))
}

package sdk

import "context"

// PipelinedWriter is implemented by the KeyedStateBackend a host gets for a keyed backend
// in a plugin process (see package sdk/host). Plugin authors do not implement it: the SDK
// serves it for every backend, calling Write one batch at a time, in order.
//
// StartWrite sends a batch of mutations and returns before the plugin has applied it, so
// that several batches are in flight across the process boundary at once, as Flink 2.0's
// asynchronous state access keeps many requests in flight. Batches apply in the order they
// were started, each after the one before; once one fails none after it is applied. wait
// returns the batch's error (or that of a batch before it that failed) when the plugin has
// answered, or ctx's error when ctx ends first.
//
// GetAfterWrites is Get on the same ordered pipeline: it sees every batch started before
// it, without waiting for their answers first, and fails when one of them failed. When it
// returns, every batch started before it has been answered.
//
// The usual rule of KeyedStateBackend holds: one goroutine at a time. Every wait must have
// returned before any method other than StartWrite and GetAfterWrites is called.
type PipelinedWriter interface {
	StartWrite(ctx context.Context, mutations []Mutation) (wait func() error)
	GetAfterWrites(ctx context.Context, keys [][]byte) ([][]byte, error)
}

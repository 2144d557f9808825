// Package optional keeps the optional interfaces of a value a test wraps. A fault-injecting
// wrapper that embeds an sdk.CheckpointStorageAccess or an sdk.KeyedStateBackend has the
// methods of that interface only: the optional interfaces of what it wraps (the runner
// discovers them with type assertions) disappear, and the runner takes other paths than it
// takes in production (a lease on its own machine, no shared-state cleanup, a state
// pipeline in its own process). Access and Keyed put them back.
package optional

import (
	"context"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// Access returns wrapper, implementing in addition each optional interface of a
// CheckpointStorageAccess (sdk.SharedStateLister, sdk.LeaseStore, sdk.LocalStateLocator)
// that wrapper or inner implements: wrapper's own methods when it has them, inner's
// otherwise. The result implements exactly the optional interfaces one of them does.
func Access(wrapper, inner sdk.CheckpointStorageAccess) sdk.CheckpointStorageAccess {
	lister, lists := pick[sdk.SharedStateLister](wrapper, inner)
	lease, leases := pick[sdk.LeaseStore](wrapper, inner)
	locator, locates := pick[sdk.LocalStateLocator](wrapper, inner)
	type (
		a = sdk.CheckpointStorageAccess
		l = sdk.SharedStateLister
		s = sdk.LeaseStore
		c = sdk.LocalStateLocator
	)
	switch {
	case lists && leases && locates:
		return struct {
			a
			l
			s
			c
		}{wrapper, lister, lease, locator}
	case lists && leases:
		return struct {
			a
			l
			s
		}{wrapper, lister, lease}
	case lists && locates:
		return struct {
			a
			l
			c
		}{wrapper, lister, locator}
	case leases && locates:
		return struct {
			a
			s
			c
		}{wrapper, lease, locator}
	case lists:
		return struct {
			a
			l
		}{wrapper, lister}
	case leases:
		return struct {
			a
			s
		}{wrapper, lease}
	case locates:
		return struct {
			a
			c
		}{wrapper, locator}
	}
	return wrapper
}

// pick returns the I of wrapper, else that of inner.
func pick[I any](wrapper, inner any) (I, bool) {
	if i, ok := wrapper.(I); ok {
		return i, true
	}
	i, ok := inner.(I)
	return i, ok
}

// Keyed returns wrapper, implementing in addition host.PipelinedWriter when wrapper or inner
// does. When only inner does, the pipelined calls go through wrapper's Write and Get, one
// at a time, so that the faults wrapper injects there apply to them too: the runner then
// pipelines to the wrapper as it pipelines to a plugin process, without the gRPC stream
// of inner.
func Keyed(wrapper, inner sdk.KeyedStateBackend) sdk.KeyedStateBackend {
	if _, ok := wrapper.(host.PipelinedWriter); ok {
		return wrapper
	}
	if _, ok := inner.(host.PipelinedWriter); !ok {
		return wrapper
	}
	return struct {
		sdk.KeyedStateBackend
		host.PipelinedWriter
	}{wrapper, &through{kb: wrapper}}
}

// through is the PipelinedWriter of a keyed backend's own Write and Get: each call is done
// when it is started, and its wait returns the outcome. Once a write failed, no later one
// is applied: each returns that failure, as the interface promises.
type through struct {
	kb     sdk.KeyedStateBackend
	failed error
}

// StartWrite implements host.PipelinedWriter.
func (t *through) StartWrite(ctx context.Context, mutations []sdk.Mutation) func() error {
	if t.failed == nil {
		t.failed = t.kb.Write(ctx, mutations)
	}
	err := t.failed
	return func() error { return err }
}

// StartRead implements host.PipelinedWriter.
func (t *through) StartRead(ctx context.Context, keys [][]byte) func() ([][]byte, error) {
	values, err := t.kb.Get(ctx, keys)
	return func() ([][]byte, error) { return values, err }
}

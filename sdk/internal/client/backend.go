package client

import (
	"context"
	"fmt"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/convert"
	pb "github.com/flowstate/flowstate/sdk/internal/proto"
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// closeTimeout bounds the calls made by methods that take no context (Close, Release).
const closeTimeout = 30 * time.Second

// closeContext is the context of a call made by a method that takes none (Close,
// Release): it ends after closeTimeout, or as soon as the plugin process exits (done), so
// that such a call never waits on a plugin that answers nothing.
func closeContext(done <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	go func() { // ends with ctx: the caller cancels it when the call returns
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// backendClient is an sdk.StateBackend served by a plugin process.
type backendClient struct {
	rpc        *Remote
	pluginInfo sdk.PluginInfo
}

func (b *backendClient) PluginInfo() sdk.PluginInfo { return b.pluginInfo }

func (b *backendClient) Configure(ctx context.Context, opts sdk.Options) error {
	return b.rpc.Configure(ctx, opts)
}

func (b *backendClient) CreateKeyedStateBackend(ctx context.Context, params sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	r, err := b.rpc.backend.CreateKeyedBackend(ctx, convert.ParamsToProto(params))
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	k := &keyedClient{c: b.rpc.backend, id: r.BackendId, readsAhead: r.ReadsAhead, done: b.rpc.done}
	if r.Pipeline {
		return pipelinedKeyedClient{k}, nil
	}
	return k, nil
}

// keyedClient is an sdk.KeyedStateBackend living in a plugin process under id.
type keyedClient struct {
	c          pb.StateBackendClient
	id         uint64
	readsAhead bool            // the plugin takes a Get while Pipeline writes are in flight
	pipe       *pipeline       // see pipelinedKeyedClient; nil until first used
	done       <-chan struct{} // closed when the plugin process has exited
}

// Get sends the keys in batches of about 1 MiB; the plugin may answer each for a prefix
// only (when the values are large) and is asked again for the rest.
func (k *keyedClient) Get(ctx context.Context, keys [][]byte) ([][]byte, error) {
	return getInBatches(k.id, keys, func(batch [][]byte) (*pb.GetResponse, error) {
		r, err := k.c.Get(ctx, &pb.GetRequest{BackendId: k.id, Keys: batch})
		return r, convert.Errors.FromStatus(err)
	})
}

// getInBatches asks get for the values of keys of keyed backend id, about 1 MiB of keys at
// a time, until every key has its value.
func getInBatches(id uint64, keys [][]byte, get func(batch [][]byte) (*pb.GetResponse, error)) ([][]byte, error) {
	values := make([][]byte, 0, len(keys))
	for len(values) < len(keys) {
		rest := keys[len(values):]
		n := wire.BatchEnd(rest, func(key []byte) int { return len(key) })
		r, err := get(rest[:n])
		if err != nil {
			return nil, err
		}
		if len(r.Values) == 0 || len(r.Values) > n {
			return nil, fmt.Errorf("keyed backend %d: plugin answered %d values for %d keys", id, len(r.Values), n)
		}
		absent := r.Absent
		for i, v := range r.Values {
			switch {
			case len(absent) > 0 && absent[0] == uint32(i):
				absent = absent[1:]
				v = nil
			case v == nil:
				v = []byte{}
			}
			values = append(values, v)
		}
	}
	return values, nil
}

// Write sends the mutations in order, in calls of about 1 MiB each.
func (k *keyedClient) Write(ctx context.Context, mutations []sdk.Mutation) error {
	for len(mutations) > 0 {
		n := wire.BatchEnd(mutations, func(m sdk.Mutation) int { return len(m.Key) + len(m.Value) })
		if _, err := k.c.Write(ctx, &pb.WriteRequest{BackendId: k.id, Packed: convert.PackMutations(mutations[:n])}); err != nil {
			return convert.Errors.FromStatus(err)
		}
		mutations = mutations[n:]
	}
	return nil
}

// Scan returns one page of at most about 1 MiB.
func (k *keyedClient) Scan(ctx context.Context, start, end []byte, limit int) ([]sdk.KV, error) {
	r, err := k.c.Scan(ctx, &pb.ScanRequest{BackendId: k.id, Start: start, End: end, Limit: int32(min(max(limit, 0), 1<<30))})
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	kvs := make([]sdk.KV, len(r.Pairs))
	for i, p := range r.Pairs {
		v := p.Value
		if v == nil {
			v = []byte{}
		}
		kvs[i] = sdk.KV{Key: p.Key, Value: v}
	}
	return kvs, nil
}

func (k *keyedClient) Snapshot(ctx context.Context, opts sdk.SnapshotOptions) (sdk.Snapshot, error) {
	r, err := k.c.Snapshot(ctx, &pb.SnapshotRequest{BackendId: k.id, CheckpointId: opts.CheckpointID, Savepoint: opts.Savepoint, Full: opts.Full})
	if err != nil {
		return nil, convert.Errors.FromStatus(err)
	}
	return &snapshotClient{c: k.c, id: r.SnapshotId, done: k.done}, nil
}

func (k *keyedClient) Restore(ctx context.Context, handles []sdk.KeyedStateHandle, state sdk.StateReader) error {
	return restoreOnPlugin(ctx, k.c, k.id, handles, state)
}

func (k *keyedClient) NotifyCheckpointComplete(ctx context.Context, checkpointID int64) error {
	_, err := k.c.NotifyCheckpointComplete(ctx, &pb.NotifyRequest{BackendId: k.id, CheckpointId: checkpointID})
	return convert.Errors.FromStatus(err)
}

func (k *keyedClient) NotifyCheckpointAborted(ctx context.Context, checkpointID int64) error {
	_, err := k.c.NotifyCheckpointAborted(ctx, &pb.NotifyRequest{BackendId: k.id, CheckpointId: checkpointID})
	return convert.Errors.FromStatus(err)
}

func (k *keyedClient) Close() error {
	ctx, cancel := closeContext(k.done)
	defer cancel()
	if k.pipe != nil {
		k.pipe.close(ctx)
		k.pipe = nil
	}
	_, err := k.c.CloseKeyedBackend(ctx, &pb.BackendRequest{BackendId: k.id})
	return convert.Errors.FromStatus(err)
}

// snapshotClient is an sdk.Snapshot living in a plugin process under id.
type snapshotClient struct {
	c    pb.StateBackendClient
	id   uint64
	done <-chan struct{} // closed when the plugin process has exited
}

func (s *snapshotClient) Write(ctx context.Context, streams sdk.CheckpointStreamFactory) ([]sdk.KeyedStateHandle, error) {
	return writeSnapshotOnPlugin(ctx, s.c, s.id, streams)
}

// Release frees the snapshot in the plugin. A failure (the plugin is gone) leaves nothing
// to free.
func (s *snapshotClient) Release() {
	ctx, cancel := closeContext(s.done)
	defer cancel()
	_, _ = s.c.SnapshotRelease(ctx, &pb.SnapshotReleaseRequest{SnapshotId: s.id})
}

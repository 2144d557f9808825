package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/sdk"
)

// harness drives one state backend and fsstorage directly through the sdk interfaces, as
// a keyed subtask does, for the figures that need no job around them.
type harness struct {
	host    *pluginhost.Host
	backend sdk.StateBackend
	access  sdk.CheckpointStorageAccess
	nextID  int64
}

// harnessJob is the job id the harness's checkpoints are stored under.
const harnessJob = "harness"

// openHarness starts backend (with opts) and fsstorage over dir in mode m.
func openHarness(ctx context.Context, pluginDir string, m mode, backend string, opts sdk.Options, dir string) (*harness, error) {
	h := &harness{host: newHost(pluginDir, m)}
	fail := func(err error) (*harness, error) { h.host.Close(); return nil, err }
	bin, err := h.host.Open(ctx, backend)
	if err != nil {
		return fail(fmt.Errorf("start %s (%s): %w", backend, m, err))
	}
	if err := bin.Configure(ctx, opts); err != nil {
		return fail(fmt.Errorf("configure %s (%s) with %v: %w", backend, m, opts, err))
	}
	var ok bool
	if h.backend, ok = bin.StateBackend(); !ok {
		return fail(fmt.Errorf("plugin %s is not a state backend", backend))
	}
	sin, err := h.host.Open(ctx, builtins.FSStorage)
	if err != nil {
		return fail(fmt.Errorf("start fsstorage (%s): %w", m, err))
	}
	if err := sin.Configure(ctx, sdk.Options{sdk.OptionCheckpointDir: "file://" + dir}); err != nil {
		return fail(fmt.Errorf("configure fsstorage (%s) with dir %s: %w", m, dir, err))
	}
	storage, ok := sin.CheckpointStorage()
	if !ok {
		return fail(fmt.Errorf("plugin fsstorage is not a checkpoint storage"))
	}
	if _, err := livePlugins(ctx, h.host, m, backend, builtins.FSStorage); err != nil {
		return fail(err)
	}
	if h.access, err = storage.CreateCheckpointStorage(ctx, harnessJob); err != nil {
		return fail(fmt.Errorf("fsstorage (%s): job %s: %w", m, harnessJob, err))
	}
	if err := h.access.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		return fail(fmt.Errorf("fsstorage (%s): job %s: %w", m, harnessJob, err))
	}
	return h, nil
}

// Close stops the plugins.
func (h *harness) Close() {
	h.access.Close()
	h.host.Close()
}

// keyed creates a keyed backend owning every key group (one subtask).
func (h *harness) keyed(ctx context.Context) (sdk.KeyedStateBackend, error) {
	kb, err := h.backend.CreateKeyedStateBackend(ctx, sdk.KeyedBackendParams{
		JobID: harnessJob, OperatorID: "op", Subtask: 0, Parallelism: 1, MaxParallelism: 128,
		KeyGroups: sdk.KeyGroupRange{Start: 0, End: 128},
	})
	if err != nil {
		return nil, fmt.Errorf("create keyed backend: %w", err)
	}
	return kb, nil
}

// stateKey is the key of entry i: its key group (i mod 128) and 8 bytes of i.
func stateKey(i int64) []byte {
	k := sdk.KeyGroupPrefix(int(i % 128))
	return binary.BigEndian.AppendUint64(k, uint64(i))
}

// fill writes the entries [from, to) of every step-th index with values of size bytes
// whose first 8 bytes are stamp, in batches of about 1 MiB.
func fill(ctx context.Context, kb sdk.KeyedStateBackend, from, to, step int64, size int, stamp uint64) error {
	per := max(1, (1<<20)/(size+16))
	muts := make([]sdk.Mutation, 0, per)
	arena := make([]byte, per*size)
	for i := from; i < to; i += step {
		v := arena[len(muts)*size : (len(muts)+1)*size]
		if size >= 8 {
			binary.BigEndian.PutUint64(v, stamp^uint64(i))
		}
		muts = append(muts, sdk.Mutation{Key: stateKey(i), Value: v})
		if len(muts) == per || i+step >= to {
			if err := kb.Write(ctx, muts); err != nil {
				return fmt.Errorf("write %d entries from %d: %w", len(muts), i, err)
			}
			muts = muts[:0]
		}
	}
	return nil
}

// snapshotResult is one checkpoint of one keyed backend.
type snapshotResult struct {
	handles  []sdk.KeyedStateHandle
	pause    time.Duration // inside Snapshot
	elapsed  time.Duration // Snapshot and Snapshot.Write
	uploaded int64         // bytes written, through streams or to local files
	size     int64         // bytes the handles refer to
}

// checkpoint takes a checkpoint of kb into a new location and tells kb it completed.
func (h *harness) checkpoint(ctx context.Context, kb sdk.KeyedStateBackend) (snapshotResult, error) {
	h.nextID++
	id := h.nextID
	loc, err := h.access.InitializeLocationForCheckpoint(ctx, id)
	if err != nil {
		return snapshotResult{}, fmt.Errorf("checkpoint %d: location: %w", id, err)
	}
	var n atomic.Int64
	// The runner's factory: a local state file counts at publication (sdk.LocalStateFactory).
	streams := checkpoint.Checksummed(loc, func(b int64) { n.Add(b) })
	start := time.Now()
	snap, err := kb.Snapshot(ctx, sdk.SnapshotOptions{CheckpointID: id})
	if err != nil {
		return snapshotResult{}, fmt.Errorf("checkpoint %d: snapshot: %w", id, err)
	}
	pause := time.Since(start)
	handles, err := snap.Write(ctx, streams)
	snap.Release()
	if err != nil {
		return snapshotResult{}, fmt.Errorf("checkpoint %d: write: %w", id, err)
	}
	// Publish metadata as the coordinator does, so the checkpoint is complete (and a later
	// harness over the same directory keeps it).
	m := &checkpoint.Metadata{Version: checkpoint.MetadataVersion, JobID: harnessJob, CheckpointID: id,
		Time: time.Now().UTC(), Backend: "benchmark", MaxParallelism: 128,
		Operators: []checkpoint.OperatorState{{ID: "op", Parallelism: 1, Subtasks: []checkpoint.SubtaskState{{Index: 0, Keyed: handles}}}}}
	if _, err := checkpoint.Publish(ctx, loc, m); err != nil {
		return snapshotResult{}, fmt.Errorf("checkpoint %d: publish metadata: %w", id, err)
	}
	r := snapshotResult{handles: handles, pause: pause, elapsed: time.Since(start), uploaded: n.Load()}
	for _, kh := range handles {
		for _, f := range kh.Files {
			r.size += f.Handle.Size
		}
	}
	if err := kb.NotifyCheckpointComplete(ctx, id); err != nil {
		return r, fmt.Errorf("checkpoint %d: notify complete: %w", id, err)
	}
	return r, nil
}

// restore restores handles into a new keyed backend and returns it and the time it took.
func (h *harness) restore(ctx context.Context, handles []sdk.KeyedStateHandle) (sdk.KeyedStateBackend, time.Duration, error) {
	kb, err := h.keyed(ctx)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if err := kb.Restore(ctx, handles, checkpoint.Reader{Access: h.access}); err != nil {
		kb.Close()
		return nil, 0, fmt.Errorf("restore: %w", err)
	}
	return kb, time.Since(start), nil
}

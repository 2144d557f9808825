package sdktest

import (
	"context"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// maxMetaSize bounds KeyedStateHandle.Meta ("at most a few KiB").
const maxMetaSize = 16 << 10

// TakeSnapshot snapshots kb (the keyed backend with parameters p), writes the snapshot to
// streams, releases it and checks the handles against the contract: key groups within p's,
// Meta of a few KiB, distinct file names, no stream left open. It fails t on an error.
func TakeSnapshot(t testing.TB, kb sdk.KeyedStateBackend, p sdk.KeyedBackendParams, opts sdk.SnapshotOptions, streams SnapshotStreams) []sdk.KeyedStateHandle {
	t.Helper()
	snap := startSnapshot(t, kb, opts)
	return finishSnapshot(t, snap, p, opts, streams)
}

// startSnapshot is the synchronous part of a checkpoint.
func startSnapshot(t testing.TB, kb sdk.KeyedStateBackend, opts sdk.SnapshotOptions) sdk.Snapshot {
	t.Helper()
	snap, err := kb.Snapshot(context.Background(), opts)
	if err != nil {
		t.Fatalf("Snapshot(%+v): %v", opts, err)
	}
	if snap == nil {
		t.Fatalf("Snapshot(%+v) returned a nil snapshot and no error", opts)
	}
	return snap
}

// SnapshotStreams are the streams TakeSnapshot writes a snapshot to: MemoryStreams,
// AdoptingStreams, or a test's own streams built on MemoryStreams (which count the streams
// left open).
type SnapshotStreams interface {
	sdk.CheckpointStreamFactory
	OpenStreams() int
}

// finishSnapshot is the asynchronous part: Write, Release and checks of the handles.
func finishSnapshot(t testing.TB, snap sdk.Snapshot, p sdk.KeyedBackendParams, opts sdk.SnapshotOptions, streams SnapshotStreams) []sdk.KeyedStateHandle {
	t.Helper()
	handles, err := snap.Write(context.Background(), streams)
	snap.Release()
	if err != nil {
		t.Fatalf("Snapshot(%+v).Write: %v", opts, err)
	}
	if n := streams.OpenStreams(); n != 0 {
		t.Errorf("Snapshot(%+v).Write returned with %d streams neither closed nor turned into a handle", opts, n)
	}
	checkHandles(t, handles, p)
	return handles
}

// checkHandles verifies what the contract says of KeyedStateHandle.
func checkHandles(t testing.TB, handles []sdk.KeyedStateHandle, p sdk.KeyedBackendParams) {
	t.Helper()
	for i, h := range handles {
		if h.Format == "" {
			t.Errorf("handle %d has an empty Format", i)
		}
		if h.KeyGroups.Start >= h.KeyGroups.End {
			t.Errorf("handle %d has an empty key group range %s", i, h.KeyGroups)
		}
		if h.KeyGroups.Start < p.KeyGroups.Start || h.KeyGroups.End > p.KeyGroups.End {
			t.Errorf("handle %d covers key groups %s, outside the backend's %s", i, h.KeyGroups, p.KeyGroups)
		}
		if len(h.Meta) > maxMetaSize {
			t.Errorf("handle %d carries %d bytes of Meta, more than %d (Meta must stay a few KiB)", i, len(h.Meta), maxMetaSize)
		}
		names := make(map[string]bool)
		for _, f := range h.Files {
			if names[f.Name] {
				t.Errorf("handle %d names two files %q", i, f.Name)
			}
			names[f.Name] = true
			if f.Handle.Ref == "" && int64(len(f.Handle.Inline)) != f.Handle.Size {
				t.Errorf("handle %d file %q: inline bytes %d but Size %d", i, f.Name, len(f.Handle.Inline), f.Handle.Size)
			}
		}
	}
}

// OpenRestored opens a keyed backend of sb with OpenKeyed and restores handles into it,
// reading them through state; it fails t when Restore fails.
func OpenRestored(t testing.TB, sb sdk.StateBackend, p sdk.KeyedBackendParams, handles []sdk.KeyedStateHandle, state sdk.StateReader) sdk.KeyedStateBackend {
	t.Helper()
	kb := OpenKeyed(t, sb, p)
	if err := kb.Restore(context.Background(), handles, state); err != nil {
		t.Fatalf("Restore of %d handles into %s subtask %d (key groups %s): %v", len(handles), p.OperatorID, p.Subtask, p.KeyGroups, err)
	}
	return kb
}

// restoreFresh restores handles into a new keyed backend of a new plugin from factory, as a
// restarted job does.
func restoreFresh(t *testing.T, factory BackendFactory, p sdk.KeyedBackendParams, handles []sdk.KeyedStateHandle, state sdk.StateReader) sdk.KeyedStateBackend {
	t.Helper()
	return OpenRestored(t, factory(t), p, handles, state)
}

// churn overwrites every other key of m, deletes every third and adds n new keys, so that a
// view taken before it differs from the state after it.
func churn(t *testing.T, kb sdk.KeyedStateBackend, m Model, r sdk.KeyGroupRange, n int, version string) {
	t.Helper()
	var muts []sdk.Mutation
	for i, k := range m.keys() {
		switch {
		case i%3 == 0:
			muts = append(muts, sdk.Mutation{Key: k, Delete: true})
		case i%2 == 0:
			muts = append(muts, sdk.Mutation{Key: k, Value: []byte(version)})
		}
	}
	for i := 0; i < n; i++ {
		g := r.Start + i%(r.End-r.Start)
		muts = append(muts, sdk.Mutation{Key: StateKey(g, version+"-new-"+string(rune('a'+i%26))+string(NumberedKey(0, i)[2:])), Value: []byte(version)})
	}
	for from := 0; from < len(muts); from += 10000 {
		MustWrite(t, kb, m, muts[from:min(from+10000, len(muts))])
	}
}

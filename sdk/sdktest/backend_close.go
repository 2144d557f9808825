package sdktest

import (
	"context"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func closeChecks(t *testing.T, factory BackendFactory) {
	t.Run("CloseReturnsNil", func(t *testing.T) {
		sb := factory(t)
		kb := createUnmanaged(t, sb, fullParams("close"))
		MustWrite(t, kb, nil, []sdk.Mutation{{Key: StateKey(1, "k"), Value: []byte("v")}})
		if err := kb.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	})
	t.Run("SameSubtaskAfterCloseStartsEmpty", func(t *testing.T) {
		sb := factory(t)
		p := fullParams("close-reopen")
		kb := createUnmanaged(t, sb, p)
		Fill(t, kb, nil, p.KeyGroups, 1000, "v1")
		if err := kb.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		CheckContents(t, OpenKeyed(t, sb, p), Model{})
	})
	t.Run("OtherSubtasksUnaffected", func(t *testing.T) {
		sb := factory(t)
		a, b := Params("close-other", 0, 2), Params("close-other", 1, 2)
		ka := createUnmanaged(t, sb, a)
		kb := OpenKeyed(t, sb, b)
		mb := make(Model)
		Fill(t, ka, nil, a.KeyGroups, 100, "a")
		Fill(t, kb, mb, b.KeyGroups, 100, "b")
		if err := ka.Close(); err != nil {
			t.Fatalf("Close of subtask 0: %v", err)
		}
		CheckContents(t, kb, mb)
	})
	t.Run("CallsAfterCloseFail", func(t *testing.T) { checkCallsAfterClose(t, factory) })
	t.Run("SnapshotWriteAfterCloseFails", func(t *testing.T) { checkSnapshotWriteAfterClose(t, factory) })
}

// createUnmanaged creates a keyed backend that the caller closes itself.
func createUnmanaged(t testing.TB, sb sdk.StateBackend, p sdk.KeyedBackendParams) sdk.KeyedStateBackend {
	t.Helper()
	kb, err := sb.CreateKeyedStateBackend(context.Background(), p)
	if err != nil {
		t.Fatalf("CreateKeyedStateBackend(%s/%s subtask %d, key groups %s): %v", p.JobID, p.OperatorID, p.Subtask, p.KeyGroups, err)
	}
	if kb == nil {
		t.Fatalf("CreateKeyedStateBackend(%s/%s subtask %d) returned a nil backend and no error", p.JobID, p.OperatorID, p.Subtask)
	}
	return kb
}

// checkCallsAfterClose verifies that every method of a closed keyed backend returns an
// error (and neither panics nor pretends to work).
func checkCallsAfterClose(t *testing.T, factory BackendFactory) {
	p := fullParams("closed-calls")
	kb := createUnmanaged(t, factory(t), p)
	Fill(t, kb, nil, p.KeyGroups, 100, "v1")
	if err := kb.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := context.Background()
	if vals, err := kb.Get(ctx, [][]byte{NumberedKey(0, 0)}); err == nil {
		t.Errorf("Get after Close returned %d values and no error", len(vals))
	}
	if err := kb.Write(ctx, []sdk.Mutation{{Key: StateKey(1, "after-close"), Value: []byte("v")}}); err == nil {
		t.Errorf("Write after Close succeeded")
	}
	if kvs, err := kb.Scan(ctx, nil, nil, 10); err == nil {
		t.Errorf("Scan after Close returned %d pairs and no error", len(kvs))
	}
	if snap, err := kb.Snapshot(ctx, sdk.SnapshotOptions{CheckpointID: 1}); err == nil {
		t.Errorf("Snapshot after Close succeeded")
		if snap != nil {
			snap.Release()
		}
	}
	if err := kb.Restore(ctx, nil, NewMemoryStreams()); err == nil {
		t.Errorf("Restore after Close succeeded")
	}
	if err := kb.NotifyCheckpointComplete(ctx, 1); err == nil {
		t.Errorf("NotifyCheckpointComplete after Close succeeded")
	}
	if err := kb.NotifyCheckpointAborted(ctx, 1); err == nil {
		t.Errorf("NotifyCheckpointAborted after Close succeeded")
	}
}

// checkSnapshotWriteAfterClose verifies that a snapshot taken before Close fails to Write
// afterwards, releases cleanly and leaves no stream open.
func checkSnapshotWriteAfterClose(t *testing.T, factory BackendFactory) {
	p := fullParams("closed-snapshot")
	kb := createUnmanaged(t, factory(t), p)
	Fill(t, kb, nil, p.KeyGroups, 100, "v1")
	snap := startSnapshot(t, kb, sdk.SnapshotOptions{CheckpointID: 1})
	if err := kb.Close(); err != nil {
		snap.Release()
		t.Fatalf("Close: %v", err)
	}
	streams := NewMemoryStreams()
	handles, err := snap.Write(context.Background(), streams)
	snap.Release()
	if err == nil {
		t.Errorf("Snapshot.Write after Close of its backend succeeded with %d handles", len(handles))
	}
	if n := streams.OpenStreams(); n != 0 {
		t.Errorf("failed Snapshot.Write left %d streams open", n)
	}
}

package sdktest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func snapshotChecks(t *testing.T, factory BackendFactory) {
	t.Run("WritesAfterSnapshotDoNotShow", func(t *testing.T) {
		p := fullParams("snap-isolation")
		kb := OpenKeyed(t, factory(t), p)
		m := make(Model)
		Fill(t, kb, m, p.KeyGroups, 3000, "v1")
		frozen := m.Clone()
		snap := startSnapshot(t, kb, sdk.SnapshotOptions{CheckpointID: 1})
		churn(t, kb, m, p.KeyGroups, 500, "v2")
		streams := NewMemoryStreams()
		handles := finishSnapshot(t, snap, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		t.Run("LiveStateHasLaterWrites", func(t *testing.T) { CheckContents(t, kb, m) })
		t.Run("RestoredStateIsTheFrozenView", func(t *testing.T) {
			CheckContents(t, restoreFresh(t, factory, p, handles, streams), frozen)
		})
	})
	t.Run("WritesConcurrentWithSnapshotWriteDoNotShow", func(t *testing.T) {
		p := fullParams("snap-concurrent")
		kb := OpenKeyed(t, factory(t), p)
		m := make(Model)
		Fill(t, kb, m, p.KeyGroups, 30000, "v1")
		frozen := m.Clone()
		opts := sdk.SnapshotOptions{CheckpointID: 7}
		snap := startSnapshot(t, kb, opts)
		streams := NewMemoryStreams()
		var (
			wg      sync.WaitGroup
			handles []sdk.KeyedStateHandle
			werr    error
		)
		wg.Add(1)
		go func() {
			defer wg.Done()
			handles, werr = snap.Write(context.Background(), streams)
		}()
		released := false
		defer func() { // also when a check below stops the test early
			wg.Wait()
			if !released {
				snap.Release()
			}
		}()
		// Processing goes on while Write runs: writes, reads and scans.
		keys := m.keys()
		for round := 0; round < 10; round++ {
			var muts []sdk.Mutation
			for i := round; i < len(keys); i += 10 {
				if i%4 == 0 {
					muts = append(muts, sdk.Mutation{Key: keys[i], Delete: true})
				} else {
					muts = append(muts, sdk.Mutation{Key: keys[i], Value: []byte(fmt.Sprintf("round-%d", round))})
				}
			}
			muts = append(muts, sdk.Mutation{Key: StateKey(round, "added-during-write"), Value: []byte("new")})
			MustWrite(t, kb, m, muts)
			if _, err := kb.Get(context.Background(), keys[:100]); err != nil {
				t.Errorf("Get while Snapshot.Write runs: %v", err)
			}
			if _, err := kb.Scan(context.Background(), nil, nil, 100); err != nil {
				t.Errorf("Scan while Snapshot.Write runs: %v", err)
			}
		}
		wg.Wait()
		snap.Release()
		released = true
		if werr != nil {
			t.Fatalf("Snapshot.Write concurrent with writes: %v", werr)
		}
		checkHandles(t, handles, p)
		CheckContents(t, kb, m)
		CheckContents(t, restoreFresh(t, factory, p, handles, streams), frozen)
	})
	t.Run("ReleaseWithoutWrite", func(t *testing.T) {
		p := fullParams("snap-release")
		kb := OpenKeyed(t, factory(t), p)
		m := make(Model)
		Fill(t, kb, m, p.KeyGroups, 1000, "v1")
		startSnapshot(t, kb, sdk.SnapshotOptions{CheckpointID: 1}).Release()
		churn(t, kb, m, p.KeyGroups, 100, "v2")
		CheckContents(t, kb, m)
		streams := NewMemoryStreams()
		handles := TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 2}, streams)
		CheckContents(t, restoreFresh(t, factory, p, handles, streams), m)
	})
	t.Run("EmptyState", func(t *testing.T) {
		p := fullParams("snap-empty")
		kb := OpenKeyed(t, factory(t), p)
		streams := NewMemoryStreams()
		handles := TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		CheckContents(t, restoreFresh(t, factory, p, handles, streams), Model{})
	})
	t.Run("EmptyValuesStayPresent", func(t *testing.T) {
		p := fullParams("snap-empty-values")
		kb := OpenKeyed(t, factory(t), p)
		m := make(Model)
		MustWrite(t, kb, m, []sdk.Mutation{{Key: StateKey(4, "empty"), Value: []byte{}}, {Key: StateKey(4, "full"), Value: []byte("x")}})
		streams := NewMemoryStreams()
		handles := TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		restored := restoreFresh(t, factory, p, handles, streams)
		vals, err := restored.Get(context.Background(), [][]byte{StateKey(4, "empty"), StateKey(4, "absent")})
		if err != nil {
			t.Fatalf("Get after Restore: %v", err)
		}
		if vals[0] == nil || len(vals[0]) != 0 {
			t.Errorf("restored empty value = %s, want a non-nil empty slice", short(vals[0]))
		}
		if vals[1] != nil {
			t.Errorf("restored absent key = %s, want nil", short(vals[1]))
		}
		CheckContents(t, restored, m)
	})
	t.Run("SuccessiveCheckpointsEachRestore", func(t *testing.T) {
		p := fullParams("snap-successive")
		kb := OpenKeyed(t, factory(t), p)
		streams := NewMemoryStreams()
		m := make(Model)
		var views []Model
		var checkpoints [][]sdk.KeyedStateHandle
		Fill(t, kb, m, p.KeyGroups, 2000, "v1")
		for id := int64(1); id <= 4; id++ {
			handles := TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: id}, streams)
			views = append(views, m.Clone())
			checkpoints = append(checkpoints, handles)
			if id == 3 {
				if err := kb.NotifyCheckpointAborted(context.Background(), id); err != nil {
					t.Fatalf("NotifyCheckpointAborted(%d): %v", id, err)
				}
			} else if err := kb.NotifyCheckpointComplete(context.Background(), id); err != nil {
				t.Fatalf("NotifyCheckpointComplete(%d): %v", id, err)
			}
			churn(t, kb, m, p.KeyGroups, 300, fmt.Sprintf("v%d", id+1))
		}
		for i, handles := range checkpoints {
			t.Run(fmt.Sprintf("Checkpoint%d", i+1), func(t *testing.T) {
				CheckContents(t, restoreFresh(t, factory, p, handles, streams), views[i])
			})
		}
	})
	t.Run("OverlappingSnapshotsEachKeepTheirView", func(t *testing.T) { checkOverlappingSnapshots(t, factory) })
	t.Run("HandlesCoverOnlyOwnKeyGroups", func(t *testing.T) {
		p := Params("snap-own-groups", 1, 2)
		kb := OpenKeyed(t, factory(t), p)
		m := make(Model)
		Fill(t, kb, m, p.KeyGroups, 1000, "v1")
		streams := NewMemoryStreams()
		handles := TakeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		if len(handles) == 0 {
			t.Fatalf("snapshot of a non-empty backend returned no handles")
		}
		CheckContents(t, restoreFresh(t, factory, p, handles, streams), m)
	})
}

package sdktest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func snapshotChecks(t *testing.T, factory BackendFactory) {
	t.Run("WritesAfterSnapshotDoNotShow", func(t *testing.T) {
		p := fullParams("snap-isolation")
		kb := openKeyed(t, factory(t), p)
		m := make(model)
		fill(t, kb, m, p.KeyGroups, 3000, "v1")
		frozen := m.clone()
		snap := startSnapshot(t, kb, sdk.SnapshotOptions{CheckpointID: 1})
		churn(t, kb, m, p.KeyGroups, 500, "v2")
		streams := NewMemoryStreams()
		handles := finishSnapshot(t, snap, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		t.Run("LiveStateHasLaterWrites", func(t *testing.T) { checkContents(t, kb, m) })
		t.Run("RestoredStateIsTheFrozenView", func(t *testing.T) {
			checkContents(t, restoreFresh(t, factory, p, handles, streams), frozen)
		})
	})
	t.Run("WritesConcurrentWithSnapshotWriteDoNotShow", func(t *testing.T) {
		p := fullParams("snap-concurrent")
		kb := openKeyed(t, factory(t), p)
		m := make(model)
		fill(t, kb, m, p.KeyGroups, 30000, "v1")
		frozen := m.clone()
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
			muts = append(muts, sdk.Mutation{Key: stateKey(round, "added-during-write"), Value: []byte("new")})
			mustWrite(t, kb, m, muts)
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
		checkContents(t, kb, m)
		checkContents(t, restoreFresh(t, factory, p, handles, streams), frozen)
	})
	t.Run("ReleaseWithoutWrite", func(t *testing.T) {
		p := fullParams("snap-release")
		kb := openKeyed(t, factory(t), p)
		m := make(model)
		fill(t, kb, m, p.KeyGroups, 1000, "v1")
		startSnapshot(t, kb, sdk.SnapshotOptions{CheckpointID: 1}).Release()
		churn(t, kb, m, p.KeyGroups, 100, "v2")
		checkContents(t, kb, m)
		streams := NewMemoryStreams()
		handles := takeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 2}, streams)
		checkContents(t, restoreFresh(t, factory, p, handles, streams), m)
	})
	t.Run("EmptyState", func(t *testing.T) {
		p := fullParams("snap-empty")
		kb := openKeyed(t, factory(t), p)
		streams := NewMemoryStreams()
		handles := takeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		checkContents(t, restoreFresh(t, factory, p, handles, streams), model{})
	})
	t.Run("EmptyValuesStayPresent", func(t *testing.T) {
		p := fullParams("snap-empty-values")
		kb := openKeyed(t, factory(t), p)
		m := make(model)
		mustWrite(t, kb, m, []sdk.Mutation{{Key: stateKey(4, "empty"), Value: []byte{}}, {Key: stateKey(4, "full"), Value: []byte("x")}})
		streams := NewMemoryStreams()
		handles := takeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		restored := restoreFresh(t, factory, p, handles, streams)
		vals, err := restored.Get(context.Background(), [][]byte{stateKey(4, "empty"), stateKey(4, "absent")})
		if err != nil {
			t.Fatalf("Get after Restore: %v", err)
		}
		if vals[0] == nil || len(vals[0]) != 0 {
			t.Errorf("restored empty value = %s, want a non-nil empty slice", short(vals[0]))
		}
		if vals[1] != nil {
			t.Errorf("restored absent key = %s, want nil", short(vals[1]))
		}
		checkContents(t, restored, m)
	})
	t.Run("SuccessiveCheckpointsEachRestore", func(t *testing.T) {
		p := fullParams("snap-successive")
		kb := openKeyed(t, factory(t), p)
		streams := NewMemoryStreams()
		m := make(model)
		var views []model
		var checkpoints [][]sdk.KeyedStateHandle
		fill(t, kb, m, p.KeyGroups, 2000, "v1")
		for id := int64(1); id <= 4; id++ {
			handles := takeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: id}, streams)
			views = append(views, m.clone())
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
				checkContents(t, restoreFresh(t, factory, p, handles, streams), views[i])
			})
		}
	})
	t.Run("HandlesCoverOnlyOwnKeyGroups", func(t *testing.T) {
		p := subtaskParams("snap-own-groups", 1, 2)
		kb := openKeyed(t, factory(t), p)
		m := make(model)
		fill(t, kb, m, p.KeyGroups, 1000, "v1")
		streams := NewMemoryStreams()
		handles := takeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		if len(handles) == 0 {
			t.Fatalf("snapshot of a non-empty backend returned no handles")
		}
		checkContents(t, restoreFresh(t, factory, p, handles, streams), m)
	})
}

func restoreChecks(t *testing.T, factory BackendFactory) {
	t.Run("RescaleOutToTwoSubtasks", func(t *testing.T) {
		p := fullParams("rescale-out")
		kb := openKeyed(t, factory(t), p)
		m := make(model)
		fill(t, kb, m, p.KeyGroups, 4000, "v1")
		streams := NewMemoryStreams()
		handles := takeSnapshot(t, kb, p, sdk.SnapshotOptions{CheckpointID: 1}, streams)
		sb := factory(t)
		for i := 0; i < 2; i++ {
			q := subtaskParams("rescale-out", i, 2)
			t.Run(fmt.Sprintf("Subtask%dKeepsKeyGroups%s", i, q.KeyGroups), func(t *testing.T) {
				half := openKeyed(t, sb, q)
				if err := half.Restore(context.Background(), handles, streams); err != nil {
					t.Fatalf("Restore into subtask %d of 2: %v", i, err)
				}
				checkContents(t, half, m.within(q.KeyGroups))
			})
		}
	})
	t.Run("RescaleInFromTwoSubtasks", func(t *testing.T) {
		sb := factory(t)
		streams := NewMemoryStreams()
		all := make(model)
		var handles []sdk.KeyedStateHandle
		for i := 0; i < 2; i++ {
			q := subtaskParams("rescale-in", i, 2)
			kb := openKeyed(t, sb, q)
			fill(t, kb, all, q.KeyGroups, 2000+i, fmt.Sprintf("subtask-%d", i))
			handles = append(handles, takeSnapshot(t, kb, q, sdk.SnapshotOptions{CheckpointID: 1}, streams)...)
		}
		checkContents(t, restoreFresh(t, factory, fullParams("rescale-in"), handles, streams), all)
	})
	t.Run("UnknownFormatIsUnsupported", func(t *testing.T) {
		kb := openKeyed(t, factory(t), fullParams("restore-unknown"))
		streams := NewMemoryStreams()
		h := sdk.KeyedStateHandle{
			KeyGroups: fullParams("").KeyGroups,
			Format:    "sdktest-no-such-format-v0",
			Files:     []sdk.NamedStateHandle{{Name: "data", Handle: streams.Put(sdk.ScopeExclusive, []byte("not a known format"))}},
		}
		err := kb.Restore(context.Background(), []sdk.KeyedStateHandle{h}, streams)
		if err == nil {
			t.Fatalf("Restore of format %q succeeded, want an error wrapping sdk.ErrUnsupported", h.Format)
		}
		if !errors.Is(err, sdk.ErrUnsupported) {
			t.Fatalf("Restore of format %q: %v; want an error wrapping sdk.ErrUnsupported", h.Format, err)
		}
	})
	t.Run("CanonicalStreamWrittenWithKVStream", func(t *testing.T) {
		m := canonicalFixture()
		streams := NewMemoryStreams()
		h := canonicalHandle(t, streams, fullParams("").KeyGroups, m)
		q := subtaskParams("restore-canonical", 1, 2)
		kb := restoreFresh(t, factory, q, []sdk.KeyedStateHandle{h}, streams)
		checkContents(t, kb, m.within(q.KeyGroups))
	})
	t.Run("CanonicalHandleWithSeveralFiles", func(t *testing.T) {
		m := canonicalFixture()
		lo, hi := m.within(sdk.KeyGroupRange{Start: 0, End: 64}), m.within(sdk.KeyGroupRange{Start: 64, End: 128})
		streams := NewMemoryStreams()
		a := canonicalHandle(t, streams, fullParams("").KeyGroups, lo)
		b := canonicalHandle(t, streams, fullParams("").KeyGroups, hi)
		a.Files = append(a.Files, sdk.NamedStateHandle{Name: "part-2", Handle: b.Files[0].Handle})
		kb := restoreFresh(t, factory, fullParams("restore-canonical-files"), []sdk.KeyedStateHandle{a}, streams)
		checkContents(t, kb, m)
	})
	t.Run("CanonicalStreamWithBadChecksumIsCorrupt", func(t *testing.T) {
		streams := NewMemoryStreams()
		h := canonicalHandle(t, streams, fullParams("").KeyGroups, canonicalFixture())
		h.Files[0].Handle.Checksum ^= 0x5a5a
		kb := openKeyed(t, factory(t), fullParams("restore-corrupt"))
		err := kb.Restore(context.Background(), []sdk.KeyedStateHandle{h}, streams)
		if !errors.Is(err, sdk.ErrCorrupt) {
			t.Fatalf("Restore of a stream whose checksum does not match: %v; want an error wrapping sdk.ErrCorrupt", err)
		}
	})
	t.Run("NoHandlesGivesEmptyState", func(t *testing.T) {
		kb := restoreFresh(t, factory, fullParams("restore-nothing"), nil, NewMemoryStreams())
		checkContents(t, kb, model{})
	})
}

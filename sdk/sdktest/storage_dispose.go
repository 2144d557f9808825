package sdktest

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func resolveChecks(t *testing.T, factory StorageFactory) {
	t.Run("NeverExistedIsNotFound", func(t *testing.T) {
		cs := factory(t)
		checkNotFound(t, cs, filepath.Join(t.TempDir(), "chk-404"), "for a pointer that never existed")
	})
	t.Run("IncompleteLocationIsNotFound", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-resolve-incomplete")
		loc := checkpointLocation(t, a, 3)
		writeStream(t, loc, sdk.ScopeExclusive, payload(1000, 80))
		checkNotFound(t, cs, loc.LocationReference(), "for a location whose metadata was never written")
	})
	t.Run("EmptyPointerFails", func(t *testing.T) {
		if _, err := factory(t).ResolveCheckpoint(context.Background(), ""); err == nil {
			t.Fatalf("ResolveCheckpoint(\"\") succeeded")
		}
	})
}

func disposeChecks(t *testing.T, factory StorageFactory) {
	t.Run("DisposeCheckpoint", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-dispose")
		ctx := context.Background()
		loc1, loc2 := checkpointLocation(t, a, 1), checkpointLocation(t, a, 2)
		excl := writeStream(t, loc1, sdk.ScopeExclusive, payload(40000, 90))
		shared := writeStream(t, loc1, sdk.ScopeShared, payload(40000, 91))
		other := writeStream(t, loc2, sdk.ScopeExclusive, payload(40000, 92))
		done1 := finalize(t, loc1, []byte("checkpoint 1"))
		done2 := finalize(t, loc2, []byte("checkpoint 2"))
		if err := a.DisposeCheckpoint(ctx, done1); err != nil {
			t.Fatalf("DisposeCheckpoint(%q): %v", done1.ExternalPointer, err)
		}
		t.Run("PointerNoLongerResolves", func(t *testing.T) {
			checkNotFound(t, cs, done1.ExternalPointer, "after DisposeCheckpoint")
		})
		t.Run("NotListed", func(t *testing.T) {
			list, err := a.ListCompletedCheckpoints(ctx)
			if err != nil {
				t.Fatalf("ListCompletedCheckpoints: %v", err)
			}
			if len(list) != 1 || list[0].ExternalPointer != done2.ExternalPointer {
				t.Fatalf("ListCompletedCheckpoints after disposing checkpoint 1 = %q, want [%q]", pointers(list), done2.ExternalPointer)
			}
		})
		t.Run("ExclusiveStateDeleted", func(t *testing.T) {
			checkGone(t, a, excl, "DisposeCheckpoint")
		})
		t.Run("SharedStateKept", func(t *testing.T) {
			checkState(t, a, shared, payload(40000, 91))
		})
		t.Run("OtherCheckpointKept", func(t *testing.T) {
			resolve(t, cs, a, done2.ExternalPointer, []byte("checkpoint 2"))
			checkState(t, a, other, payload(40000, 92))
		})
	})
	t.Run("DisposeOnFailure", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-dispose-failure")
		ctx := context.Background()
		loc := checkpointLocation(t, a, 1)
		excl := writeStream(t, loc, sdk.ScopeExclusive, payload(40000, 93))
		shared := writeStream(t, loc, sdk.ScopeShared, payload(40000, 94))
		if err := loc.DisposeOnFailure(ctx); err != nil {
			t.Fatalf("DisposeOnFailure: %v", err)
		}
		checkGone(t, a, excl, "DisposeOnFailure")
		checkState(t, a, shared, payload(40000, 94))
		if dir, ok := localDir(loc.LocationReference()); ok && countFiles(dir) != 0 {
			t.Errorf("location directory %s still holds %d files after DisposeOnFailure", dir, countFiles(dir))
		}
		checkNotFound(t, cs, loc.LocationReference(), "after DisposeOnFailure")
		list, err := a.ListCompletedCheckpoints(ctx)
		if err != nil {
			t.Fatalf("ListCompletedCheckpoints: %v", err)
		}
		if len(list) != 0 {
			t.Fatalf("ListCompletedCheckpoints after DisposeOnFailure = %q", pointers(list))
		}
	})
	t.Run("DiscardState", func(t *testing.T) {
		a := openAccess(t, factory(t), "sdktest-discard")
		ctx := context.Background()
		loc := checkpointLocation(t, a, 1)
		var handles []sdk.StreamStateHandle
		for i := 0; i < 3; i++ {
			handles = append(handles, writeStream(t, loc, sdk.ScopeShared, payload(30000, byte(100+i))))
		}
		tiny := writeStream(t, loc, sdk.ScopeShared, []byte("x"))
		kept := writeStream(t, loc, sdk.ScopeShared, payload(30000, 110))
		if err := a.DiscardState(ctx, append(handles, tiny)); err != nil {
			t.Fatalf("DiscardState of %d handles: %v", len(handles)+1, err)
		}
		for _, h := range handles {
			checkGone(t, a, h, "DiscardState")
		}
		checkState(t, a, kept, payload(30000, 110))
		if err := a.DiscardState(ctx, append(handles, tiny)); err != nil {
			t.Fatalf("DiscardState of handles already discarded: %v; missing ones are not an error", err)
		}
		if err := a.DiscardState(ctx, nil); err != nil {
			t.Fatalf("DiscardState of no handles: %v", err)
		}
	})
}

func storageSavepointChecks(t *testing.T, factory StorageFactory) {
	t.Run("ExplicitTarget", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-savepoint")
		ctx := context.Background()
		loc, err := a.InitializeLocationForSavepoint(ctx, 9, t.TempDir())
		if err != nil {
			t.Fatalf("InitializeLocationForSavepoint with a target: %v", err)
		}
		state := payload(200000, 120)
		h := writeStream(t, loc, sdk.ScopeExclusive, state)
		done := finalize(t, loc, []byte("savepoint 9"))
		resolve(t, cs, a, done.ExternalPointer, []byte("savepoint 9"))
		checkState(t, a, h, state)
		list, err := a.ListCompletedCheckpoints(ctx)
		if err != nil {
			t.Fatalf("ListCompletedCheckpoints: %v", err)
		}
		if len(list) != 0 {
			t.Errorf("ListCompletedCheckpoints lists savepoints: %q", pointers(list))
		}
	})
	t.Run("TwoSavepointsInOneTarget", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-savepoint-two")
		target := t.TempDir()
		var done []sdk.CompletedCheckpointStorageLocation
		for _, id := range []int64{1, 2} {
			loc, err := a.InitializeLocationForSavepoint(context.Background(), id, target)
			if err != nil {
				t.Fatalf("InitializeLocationForSavepoint(%d): %v", id, err)
			}
			done = append(done, finalize(t, loc, []byte{byte(id)}))
		}
		if done[0].ExternalPointer == done[1].ExternalPointer {
			t.Fatalf("two savepoints in %s share pointer %q", target, done[0].ExternalPointer)
		}
		resolve(t, cs, a, done[0].ExternalPointer, []byte{1})
		resolve(t, cs, a, done[1].ExternalPointer, []byte{2})
	})
	t.Run("NoTarget", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-savepoint-default")
		ctx := context.Background()
		loc, err := a.InitializeLocationForSavepoint(ctx, 4, "")
		if !a.HasDefaultSavepointLocation() {
			if err == nil {
				t.Fatalf("InitializeLocationForSavepoint without target or default succeeded (at %q); want an error wrapping sdk.ErrInvalidArgument", loc.LocationReference())
			}
			if !errors.Is(err, sdk.ErrInvalidArgument) {
				t.Fatalf("InitializeLocationForSavepoint without target or default: %v; want an error wrapping sdk.ErrInvalidArgument", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("InitializeLocationForSavepoint without target, default configured: %v", err)
		}
		done := finalize(t, loc, []byte("default savepoint"))
		resolve(t, cs, a, done.ExternalPointer, []byte("default savepoint"))
	})
}

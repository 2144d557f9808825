package sdktest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

func storagePluginChecks(t *testing.T, factory StorageFactory) {
	t.Run("PluginInfo", func(t *testing.T) { checkPluginInfo(t, factory(t)) })
	t.Run("ConfigureUnknownOptionIsOptionError", func(t *testing.T) { checkUnknownOption(t, factory(t)) })
	t.Run("KindsIncludeCheckpointStorage", func(t *testing.T) {
		kinds := host.KindsOf(factory(t))
		found := false
		for _, k := range kinds {
			found = found || k == sdk.KindCheckpointStorage
		}
		if !found {
			t.Fatalf("KindsOf = %v, want checkpoint-storage among them", kinds)
		}
	})
}

func accessChecks(t *testing.T, factory StorageFactory) {
	t.Run("InitializeBaseLocationsTwice", func(t *testing.T) {
		a := openAccess(t, factory(t), "sdktest-init-twice")
		if err := a.InitializeBaseLocationsForCheckpoint(context.Background()); err != nil {
			t.Fatalf("second InitializeBaseLocationsForCheckpoint: %v", err)
		}
		checkpointLocation(t, a, 1)
	})
	t.Run("CloseReturnsNil", func(t *testing.T) {
		cs := factory(t)
		a, err := cs.CreateCheckpointStorage(context.Background(), "sdktest-close")
		if err != nil {
			t.Fatalf("CreateCheckpointStorage: %v", err)
		}
		if err := a.InitializeBaseLocationsForCheckpoint(context.Background()); err != nil {
			t.Fatalf("InitializeBaseLocationsForCheckpoint: %v", err)
		}
		if err := a.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	})
	t.Run("ReinitializeKeepsCompletedCheckpoints", func(t *testing.T) {
		cs := factory(t)
		const job = "sdktest-reinit-keeps"
		a := openAccess(t, cs, job)
		loc := checkpointLocation(t, a, 1)
		state := payload(5000, 1)
		h := writeStream(t, loc, sdk.ScopeExclusive, state)
		shared := writeStream(t, loc, sdk.ScopeShared, payload(3000, 2))
		done := finalize(t, loc, []byte("metadata of checkpoint 1"))
		b := openAccess(t, cs, job) // a restarted job initializes again
		resolve(t, cs, b, done.ExternalPointer, []byte("metadata of checkpoint 1"))
		checkState(t, b, h, state)
		checkState(t, b, shared, payload(3000, 2))
		list, err := b.ListCompletedCheckpoints(context.Background())
		if err != nil {
			t.Fatalf("ListCompletedCheckpoints: %v", err)
		}
		if len(list) != 1 || list[0].ExternalPointer != done.ExternalPointer {
			t.Fatalf("ListCompletedCheckpoints after reinitializing = %v, want [%q]", pointers(list), done.ExternalPointer)
		}
	})
	t.Run("ReinitializeRemovesIncompleteCheckpoints", func(t *testing.T) {
		cs := factory(t)
		const job = "sdktest-reinit-removes"
		a := openAccess(t, cs, job)
		loc := checkpointLocation(t, a, 2)
		h := writeStream(t, loc, sdk.ScopeExclusive, payload(5000, 3))
		b := openAccess(t, cs, job)
		checkGone(t, b, h, "InitializeBaseLocationsForCheckpoint (the checkpoint never completed)")
		checkNotFound(t, cs, loc.LocationReference(), "for a checkpoint that never completed")
	})
	t.Run("PropertiesAreStable", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-ha")
		ha, sp := a.SupportsHighlyAvailableStorage(), a.HasDefaultSavepointLocation()
		t.Logf("SupportsHighlyAvailableStorage = %v, HasDefaultSavepointLocation = %v", ha, sp)
		writeStream(t, checkpointLocation(t, a, 1), sdk.ScopeExclusive, payload(100, 4))
		if got := a.SupportsHighlyAvailableStorage(); got != ha {
			t.Errorf("SupportsHighlyAvailableStorage = %v after a checkpoint location was used, %v before", got, ha)
		}
		if got := a.HasDefaultSavepointLocation(); got != sp {
			t.Errorf("HasDefaultSavepointLocation = %v after a checkpoint location was used, %v before", got, sp)
		}
		b := openAccess(t, cs, "sdktest-ha")
		if b.SupportsHighlyAvailableStorage() != ha || b.HasDefaultSavepointLocation() != sp {
			t.Errorf("a second access of the job reports SupportsHighlyAvailableStorage = %v, HasDefaultSavepointLocation = %v; the first %v, %v",
				b.SupportsHighlyAvailableStorage(), b.HasDefaultSavepointLocation(), ha, sp)
		}
	})
}

func locationChecks(t *testing.T, factory StorageFactory) {
	t.Run("DistinctPerCheckpoint", func(t *testing.T) {
		a := openAccess(t, factory(t), "sdktest-locations")
		refs := make(map[string]int64)
		for id := int64(1); id <= 3; id++ {
			loc := checkpointLocation(t, a, id)
			ref := loc.LocationReference()
			if ref == "" {
				t.Errorf("LocationReference of checkpoint %d is empty", id)
			}
			writeStream(t, loc, sdk.ScopeExclusive, payload(100, byte(id)))
			if got := loc.LocationReference(); got != ref {
				t.Errorf("LocationReference of checkpoint %d is %q after a stream was written, %q before", id, got, ref)
			}
			if other, dup := refs[ref]; dup {
				t.Errorf("checkpoints %d and %d share location %q", other, id, ref)
			}
			refs[ref] = id
		}
	})
	t.Run("DistinctPerJob", func(t *testing.T) {
		cs := factory(t)
		a, b := openAccess(t, cs, "sdktest-job-a"), openAccess(t, cs, "sdktest-job-b")
		if ra, rb := checkpointLocation(t, a, 1).LocationReference(), checkpointLocation(t, b, 1).LocationReference(); ra == rb {
			t.Errorf("checkpoint 1 of two jobs share location %q", ra)
		}
	})
}

// streamSizes are the stream sizes the round trip covers.
var streamSizes = []struct {
	name string
	n    int
}{{"0B", 0}, {"1B", 1}, {"100KiB", 100 << 10}, {"3MiB", 3 << 20}}

func streamChecks(t *testing.T, factory StorageFactory) {
	cs := factory(t)
	a := openAccess(t, cs, "sdktest-streams")
	loc := checkpointLocation(t, a, 1)
	for _, scope := range []sdk.Scope{sdk.ScopeExclusive, sdk.ScopeShared} {
		for i, size := range streamSizes {
			t.Run(fmt.Sprintf("RoundTrip/%s/%s", scope, size.name), func(t *testing.T) {
				data := payload(size.n, byte(10+i))
				h := writeStream(t, loc, scope, data)
				checkState(t, a, h, data)
			})
		}
	}
	t.Run("CloseAfterHandleDoesNothing", func(t *testing.T) {
		ctx := context.Background()
		s, err := loc.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
		if err != nil {
			t.Fatalf("CreateCheckpointStateOutputStream: %v", err)
		}
		data := payload(70000, 30)
		if _, err := s.Write(data); err != nil {
			t.Fatalf("Write: %v", err)
		}
		h, err := s.CloseAndGetHandle(ctx)
		if err != nil {
			t.Fatalf("CloseAndGetHandle: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close after CloseAndGetHandle: %v", err)
		}
		checkState(t, a, h, data)
	})
	t.Run("CloseWithoutHandleDiscards", func(t *testing.T) {
		ctx := context.Background()
		loc := checkpointLocation(t, a, 2)
		dir, local := localDir(loc.LocationReference())
		before := 0
		if local {
			before = countFiles(dir)
		}
		for _, scope := range []sdk.Scope{sdk.ScopeExclusive, sdk.ScopeShared} {
			s, err := loc.CreateCheckpointStateOutputStream(ctx, scope)
			if err != nil {
				t.Fatalf("CreateCheckpointStateOutputStream(%s): %v", scope, err)
			}
			if _, err := s.Write(payload(200000, 31)); err != nil {
				t.Fatalf("Write: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close of a %s stream without CloseAndGetHandle: %v", scope, err)
			}
		}
		if local {
			if after := countFiles(dir); after != before {
				t.Errorf("location directory %s holds %d files after a discarded exclusive stream, %d before", dir, after, before)
			}
		}
		list, err := a.ListCompletedCheckpoints(ctx)
		if err != nil {
			t.Fatalf("ListCompletedCheckpoints: %v", err)
		}
		if len(list) != 0 {
			t.Errorf("ListCompletedCheckpoints lists %v, but no metadata was finalized", pointers(list))
		}
	})
	t.Run("ConcurrentStreams", func(t *testing.T) {
		const n = 8
		var wg sync.WaitGroup
		handles := make([]sdk.StreamStateHandle, n)
		errs := make([]error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				handles[i], errs[i] = tryWriteStream(loc, sdk.Scope(i%2), payload(300000+i, byte(40+i)))
			}(i)
		}
		wg.Wait()
		for i := 0; i < n; i++ {
			if errs[i] != nil {
				t.Fatalf("stream %d: %v", i, errs[i])
			}
			checkStreamHandle(t, handles[i], sdk.Scope(i%2), 300000+i)
			checkState(t, a, handles[i], payload(300000+i, byte(40+i)))
		}
	})
	t.Run("ReadableFromAnotherJob", func(t *testing.T) {
		data := payload(50000, 50)
		h := writeStream(t, loc, sdk.ScopeShared, data)
		other := openAccess(t, cs, "sdktest-streams-other")
		checkState(t, other, h, data)
	})
	t.Run("HandlesAreDistinct", func(t *testing.T) {
		a1 := writeStream(t, loc, sdk.ScopeExclusive, payload(2000, 60))
		a2 := writeStream(t, loc, sdk.ScopeExclusive, payload(2000, 61))
		if a1.Ref != "" && a1.Ref == a2.Ref {
			t.Fatalf("two streams got the same Ref %q", a1.Ref)
		}
		checkState(t, a, a1, payload(2000, 60))
		checkState(t, a, a2, payload(2000, 61))
	})
}

func metadataChecks(t *testing.T, factory StorageFactory) {
	t.Run("FinalizeMakesCheckpointResolvable", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-finalize")
		loc := checkpointLocation(t, a, 5)
		state := payload(10000, 70)
		h := writeStream(t, loc, sdk.ScopeExclusive, state)
		meta := payload(1500, 71)
		done := finalize(t, loc, meta)
		checkState(t, a, done.Metadata, meta)
		got := resolve(t, cs, a, done.ExternalPointer, meta)
		if got.ExternalPointer != done.ExternalPointer {
			t.Errorf("ResolveCheckpoint(%q).ExternalPointer = %q", done.ExternalPointer, got.ExternalPointer)
		}
		if got.CheckpointID != 0 && got.CheckpointID != 5 {
			t.Errorf("ResolveCheckpoint(%q).CheckpointID = %d, want 5 (or 0 when unknown)", done.ExternalPointer, got.CheckpointID)
		}
		checkState(t, a, h, state)
	})
	t.Run("LargeMetadata", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-large-metadata")
		meta := payload(1<<20, 72)
		done := finalize(t, checkpointLocation(t, a, 1), meta)
		resolve(t, cs, a, done.ExternalPointer, meta)
	})
	t.Run("SecondFinalizeFails", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-finalize-twice")
		loc := checkpointLocation(t, a, 1)
		done := finalize(t, loc, []byte("first"))
		ctx := context.Background()
		out, err := loc.CreateMetadataOutputStream(ctx)
		if err == nil {
			if _, err := out.Write([]byte("second")); err != nil {
				t.Logf("writing second metadata: %v", err)
			}
			if _, err = out.CloseAndFinalize(ctx); err == nil {
				t.Fatalf("second CloseAndFinalize of checkpoint 1 succeeded, want an error (metadata exists)")
			}
			out.Close()
		}
		t.Logf("second finalize refused: %v", err)
		resolve(t, cs, a, done.ExternalPointer, []byte("first"))
	})
	t.Run("CloseWithoutFinalizeDiscards", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-metadata-discard")
		loc := checkpointLocation(t, a, 1)
		ctx := context.Background()
		out, err := loc.CreateMetadataOutputStream(ctx)
		if err != nil {
			t.Fatalf("CreateMetadataOutputStream: %v", err)
		}
		if _, err := out.Write([]byte("half-written metadata")); err != nil {
			t.Fatalf("writing metadata: %v", err)
		}
		if err := out.Close(); err != nil {
			t.Fatalf("Close of metadata without CloseAndFinalize: %v", err)
		}
		checkNotFound(t, cs, loc.LocationReference(), "after the metadata stream was closed without CloseAndFinalize")
		list, err := a.ListCompletedCheckpoints(ctx)
		if err != nil {
			t.Fatalf("ListCompletedCheckpoints: %v", err)
		}
		if len(list) != 0 {
			t.Fatalf("ListCompletedCheckpoints lists %v after discarded metadata", pointers(list))
		}
		done := finalize(t, loc, []byte("whole metadata"))
		resolve(t, cs, a, done.ExternalPointer, []byte("whole metadata"))
	})
}

func listChecks(t *testing.T, factory StorageFactory) {
	t.Run("OldestFirstCompletedOnly", func(t *testing.T) {
		cs := factory(t)
		a := openAccess(t, cs, "sdktest-list")
		ctx := context.Background()
		var want []sdk.CompletedCheckpointStorageLocation
		for id := int64(1); id <= 3; id++ {
			loc := checkpointLocation(t, a, id)
			writeStream(t, loc, sdk.ScopeExclusive, payload(1000, byte(id)))
			want = append(want, finalize(t, loc, []byte(fmt.Sprintf("metadata %d", id))))
		}
		// Checkpoint 4 has state but no metadata; 5 has metadata that was never finalized.
		writeStream(t, checkpointLocation(t, a, 4), sdk.ScopeExclusive, payload(1000, 4))
		out, err := checkpointLocation(t, a, 5).CreateMetadataOutputStream(ctx)
		if err != nil {
			t.Fatalf("CreateMetadataOutputStream of checkpoint 5: %v", err)
		}
		out.Write([]byte("never finalized"))
		defer out.Close()
		// Savepoints are not checkpoints.
		sp, err := a.InitializeLocationForSavepoint(ctx, 6, t.TempDir())
		if err != nil {
			t.Fatalf("InitializeLocationForSavepoint: %v", err)
		}
		finalize(t, sp, []byte("savepoint metadata"))

		got, err := a.ListCompletedCheckpoints(ctx)
		if err != nil {
			t.Fatalf("ListCompletedCheckpoints: %v", err)
		}
		if fmt.Sprint(pointers(got)) != fmt.Sprint(pointers(want)) {
			t.Fatalf("ListCompletedCheckpoints = %q, want checkpoints 1, 2, 3 oldest first: %q", pointers(got), pointers(want))
		}
		for i, c := range got {
			if c.CheckpointID != 0 && c.CheckpointID != int64(i+1) {
				t.Errorf("listed checkpoint %q has CheckpointID %d, want %d", c.ExternalPointer, c.CheckpointID, i+1)
			}
			if meta := readState(t, a, c.Metadata); !bytes.Equal(meta, []byte(fmt.Sprintf("metadata %d", i+1))) {
				t.Errorf("listed checkpoint %q has metadata %q", c.ExternalPointer, cut(meta))
			}
		}
	})
	t.Run("NoneForFreshJob", func(t *testing.T) {
		got, err := openAccess(t, factory(t), "sdktest-list-empty").ListCompletedCheckpoints(context.Background())
		if err != nil {
			t.Fatalf("ListCompletedCheckpoints: %v", err)
		}
		if len(got) != 0 {
			t.Fatalf("ListCompletedCheckpoints of a fresh job = %q", pointers(got))
		}
	})
	t.Run("JobsAreSeparate", func(t *testing.T) {
		cs := factory(t)
		a, b := openAccess(t, cs, "sdktest-list-a"), openAccess(t, cs, "sdktest-list-b")
		finalize(t, checkpointLocation(t, a, 1), []byte("job a"))
		got, err := b.ListCompletedCheckpoints(context.Background())
		if err != nil {
			t.Fatalf("ListCompletedCheckpoints: %v", err)
		}
		if len(got) != 0 {
			t.Fatalf("job b lists job a's checkpoints: %q", pointers(got))
		}
	})
}

// pointers lists the external pointers of locations.
func pointers(locs []sdk.CompletedCheckpointStorageLocation) []string {
	out := make([]string, len(locs))
	for i, l := range locs {
		out[i] = l.ExternalPointer
	}
	return out
}

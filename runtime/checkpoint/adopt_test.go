package checkpoint

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// adoptingAccess is a recordingAccess whose storage adopts files: the handle of a file is
// "adopted:" and its URI.
type adoptingAccess struct {
	recordingAccess
}

func (a *adoptingAccess) AdoptRemoteFiles(_ context.Context, files []sdk.StreamStateHandle) ([]sdk.StreamStateHandle, error) {
	out := make([]sdk.StreamStateHandle, len(files))
	for i, f := range files {
		out[i] = sdk.StreamStateHandle{Ref: "adopted:" + f.Ref, Size: f.Size, Scope: sdk.ScopeShared}
	}
	return out, nil
}

// adopt adopts the files uris through the streams the store gives a checkpoint.
func adopt(t *testing.T, s *Store, uris ...string) {
	t.Helper()
	r, ok := s.Adopting(nopFactory{}).(sdk.RemoteFileAdopter)
	if !ok {
		t.Fatal("a checkpoint's streams over an adopting access do not adopt")
	}
	var files []sdk.StreamStateHandle
	for _, u := range uris {
		files = append(files, sdk.StreamStateHandle{Ref: u, Size: 1, Checksum: 7})
	}
	hs, err := r.AdoptRemoteFiles(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.Checksum != 7 {
			t.Fatalf("adopted handle %+v lost the backend's checksum", h)
		}
	}
}

// nopFactory is a stream factory the tests never write to.
type nopFactory struct{ sdk.CheckpointStreamFactory }

// TestStoreOwnershipOfAdoptedFiles follows files a backend had the storage adopt: while
// no completed checkpoint references one it is the live backend's, so the discard of a
// failed checkpoint leaves it alone; once a completed checkpoint references it, retention
// decides (num-retained 1: it goes one checkpoint after the last that references it, never
// earlier); at the end of the attempt, those no completed checkpoint ever referenced and no
// retained one references are discarded.
func TestStoreOwnershipOfAdoptedFiles(t *testing.T) {
	ctx := context.Background()
	a := &adoptingAccess{}
	s := NewStore(a, 1)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Checkpoint 1 adopts t1 and t2 and uploads u1, then fails.
	adopt(t, s, "t1", "t2")
	must(s.DiscardUnreferenced(ctx, completedWith(1, true, "adopted:t1", "adopted:t2", "u1").Metadata.Operators[0].Subtasks))
	if want := []string{"u1"}; !slices.Equal(a.discarded, want) {
		t.Fatalf("failed checkpoint 1: discarded %v, want its upload %v alone", a.discarded, want)
	}
	// Checkpoint 2 references t1 (the backend still reads it) and adopts t3; t2 was
	// compacted away by the backend, which deletes it itself.
	adopt(t, s, "t3")
	must(s.Add(ctx, completedWith(2, true, "adopted:t1", "adopted:t3")))
	// Checkpoint 3 adopts t4 and fails: t4 stays the backend's, t1 and t3 the registry's.
	adopt(t, s, "t4")
	a.discarded = nil
	must(s.DiscardUnreferenced(ctx, completedWith(3, true, "adopted:t1", "adopted:t4").Metadata.Operators[0].Subtasks))
	if len(a.discarded) != 0 {
		t.Fatalf("failed checkpoint 3: discarded %v, want nothing (t1 is retained, t4 adopted)", a.discarded)
	}
	// Checkpoints 4 and 5 no longer reference t1: it goes with 5, not with 4.
	must(s.Add(ctx, completedWith(4, true, "adopted:t3", "adopted:t4")))
	if len(a.discarded) != 0 {
		t.Fatalf("after checkpoint 4: discarded %v, want t1 deferred one checkpoint", a.discarded)
	}
	must(s.Add(ctx, completedWith(5, true, "adopted:t3", "adopted:t4")))
	if want := []string{"adopted:t1"}; !slices.Equal(a.discarded, want) {
		t.Fatalf("after checkpoint 5: discarded %v, want %v", a.discarded, want)
	}
	// The attempt ends: t2 (adopted for failed checkpoint 1 only) goes; t3 and t4 stay.
	a.discarded = nil
	must(s.DiscardDeferred(ctx))
	if want := []string{"adopted:t2"}; !slices.Equal(a.discarded, want) {
		t.Fatalf("DiscardDeferred discarded %v, want %v", a.discarded, want)
	}
}

// TestAdoptingOnlyOverAnAdoptingAccess: over an access that does not adopt, a checkpoint's
// streams do not either, and a storage restarted as one that does not answers
// sdk.ErrUnsupported to streams handed out before.
func TestAdoptingOnlyOverAnAdoptingAccess(t *testing.T) {
	plain := NewStore(&recordingAccess{}, 1)
	if _, ok := plain.Adopting(nopFactory{}).(sdk.RemoteFileAdopter); ok {
		t.Fatal("streams adopt over an access that does not")
	}
	s := NewStore(&adoptingAccess{}, 1)
	r := s.Adopting(nopFactory{}).(sdk.RemoteFileAdopter)
	s.SetAccess(&recordingAccess{})
	if _, err := r.AdoptRemoteFiles(context.Background(), []sdk.StreamStateHandle{{Ref: "t1", Size: 1}}); !errors.Is(err, sdk.ErrUnsupported) {
		t.Fatalf("adopting through a storage that no longer adopts: %v, want sdk.ErrUnsupported", err)
	}
}

package checkpoint

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// recordingAccess records disposals and discards; it implements only what Store calls.
type recordingAccess struct {
	sdk.CheckpointStorageAccess
	disposed  []string
	discarded []string
}

func (a *recordingAccess) DisposeCheckpoint(_ context.Context, loc sdk.CompletedCheckpointStorageLocation) error {
	a.disposed = append(a.disposed, loc.ExternalPointer)
	return nil
}

func (a *recordingAccess) DiscardState(_ context.Context, hs []sdk.StreamStateHandle) error {
	for _, h := range hs {
		a.discarded = append(a.discarded, h.Ref)
	}
	return nil
}

func (a *recordingAccess) OpenState(context.Context, sdk.StreamStateHandle) (io.ReadCloser, error) {
	panic("not used")
}

// completedWith returns checkpoint id referencing the shared refs.
func completedWith(id int64, owned bool, refs ...string) *Completed {
	var files []sdk.NamedStateHandle
	for _, r := range refs {
		files = append(files, sdk.NamedStateHandle{Name: r, Handle: sdk.StreamStateHandle{Ref: r, Size: 1, Scope: sdk.ScopeShared}})
	}
	m := &Metadata{CheckpointID: id, Operators: []OperatorState{{ID: "op", Subtasks: []SubtaskState{{Keyed: []sdk.KeyedStateHandle{{Format: "x", Files: files}}}}}}}
	return &Completed{Location: sdk.CompletedCheckpointStorageLocation{ExternalPointer: "chk-" + string(rune('0'+id))}, Metadata: m, Owned: owned}
}

func TestStoreNeverDiscardsWhatARetainedCheckpointReferences(t *testing.T) {
	ctx := context.Background()
	a := &recordingAccess{}
	s := NewStore(a, 1)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Add(ctx, completedWith(1, true, "base1")))
	must(s.Add(ctx, completedWith(2, true, "base1", "d1")))
	if len(a.disposed) != 1 || len(a.discarded) != 0 {
		t.Fatalf("after 2: disposed %v discarded %v; want chk-1 disposed and base1 kept", a.disposed, a.discarded)
	}
	// Checkpoint 3 writes a new base: base1 and d1 are unreferenced, but deferred one
	// checkpoint, since a snapshot taken before the backend heard of 3 may reference them.
	must(s.Add(ctx, completedWith(3, true, "base3")))
	if len(a.discarded) != 0 {
		t.Fatalf("discarded %v at once; want them deferred", a.discarded)
	}
	// Checkpoint 4 was such a snapshot: it still references base1 and d1.
	must(s.Add(ctx, completedWith(4, true, "base1", "d1", "d4")))
	if len(a.discarded) != 0 {
		t.Fatalf("discarded %v, which checkpoint 4 references", a.discarded)
	}
	// 5 references base3 only; base1, d1 and d4 go at the next Add.
	must(s.Add(ctx, completedWith(5, true, "base3", "d5")))
	must(s.Add(ctx, completedWith(6, true, "base3", "d5", "d6")))
	slices.Sort(a.discarded)
	if want := []string{"base1", "d1", "d4"}; !slices.Equal(a.discarded, want) {
		t.Fatalf("discarded %v, want %v", a.discarded, want)
	}
	// A failed checkpoint's uploads go, what it shares with retained ones stays.
	a.discarded = nil
	must(s.DiscardUnreferenced(ctx, completedWith(7, true, "base3", "d5", "d6", "d7").Metadata.Operators[0].Subtasks))
	if want := []string{"d7"}; !slices.Equal(a.discarded, want) {
		t.Fatalf("failed checkpoint: discarded %v, want %v", a.discarded, want)
	}
	// At the end of an attempt, the deferred ones go.
	a.discarded = nil
	must(s.Add(ctx, completedWith(8, true, "base8")))
	must(s.DiscardDeferred(ctx))
	slices.Sort(a.discarded)
	if want := []string{"base3", "d5", "d6"}; !slices.Equal(a.discarded, want) {
		t.Fatalf("DiscardDeferred discarded %v, want %v", a.discarded, want)
	}
}

func TestStoreKeepsTheSharedStateOfCheckpointsItDoesNotOwn(t *testing.T) {
	ctx := context.Background()
	a := &recordingAccess{}
	s := NewStore(a, 1)
	// Restored from another job's checkpoint: its files are never discarded, even once
	// no retained checkpoint references them.
	if err := s.Add(ctx, completedWith(1, false, "other/base")); err != nil {
		t.Fatal(err)
	}
	for id := int64(2); id <= 5; id++ {
		if err := s.Add(ctx, completedWith(id, true, "other/base", "own"+string(rune('0'+id)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add(ctx, completedWith(6, true, "new-base")); err != nil {
		t.Fatal(err)
	}
	if err := s.DiscardDeferred(ctx); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(a.discarded, "other/base") || slices.Contains(a.disposed, "chk-1") {
		t.Fatalf("discarded %v disposed %v: the restored checkpoint's state must stay", a.discarded, a.disposed)
	}
	if !slices.Contains(a.discarded, "own5") {
		t.Fatalf("discarded %v, want own5 among them", a.discarded)
	}
}

func TestStoreAddAllAppliesRetentionOnce(t *testing.T) {
	ctx := context.Background()
	a := &recordingAccess{}
	s := NewStore(a, 2)
	err := s.AddAll(ctx, []*Completed{completedWith(1, true, "b1"), completedWith(2, true, "b1", "d2"), completedWith(3, true, "b1", "d2", "d3")})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.disposed, []string{"chk-1"}) || len(a.discarded) != 0 || s.Latest().Metadata.CheckpointID != 3 || s.NextID() != 4 {
		t.Fatalf("disposed %v discarded %v latest %d", a.disposed, a.discarded, s.Latest().Metadata.CheckpointID)
	}
}

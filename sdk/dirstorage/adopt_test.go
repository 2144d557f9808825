package dirstorage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// TestAdoptedFileOutsideTheDirectory: a file the job adopted outside the checkpoint
// directory is listed as shared state by its marker (with size 0 once the file is gone),
// and DiscardState deletes it and its marker; the same file of another job, which never
// adopted it, is refused, and so is a file the job never adopted.
func TestAdoptedFileOutsideTheDirectory(t *testing.T) {
	ctx := context.Background()
	s, _ := newConfigured(t, nil)
	a := newJob(t, s, "job")
	other := newJob(t, s, "other")
	path := filepath.Join(t.TempDir(), "remote", "000003.ldb")
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte("table"), 0o644); err != nil {
		t.Fatal(err)
	}
	hs, err := a.(sdk.RemoteFileAdopter).AdoptRemoteFiles(ctx, []sdk.StreamStateHandle{{Ref: "file://" + path, Size: 5}})
	if err != nil {
		t.Fatal(err)
	}
	never := sdk.StreamStateHandle{Ref: "file://" + filepath.Join(filepath.Dir(path), "never.ldb"), Scope: sdk.ScopeShared}
	os.WriteFile(strings.TrimPrefix(never.Ref, "file://"), []byte("x"), 0o644)
	for _, c := range []struct {
		a sdk.CheckpointStorageAccess
		h sdk.StreamStateHandle
	}{{other, hs[0]}, {a, never}} {
		if err := c.a.DiscardState(ctx, []sdk.StreamStateHandle{c.h}); !errors.Is(err, sdk.ErrInvalidArgument) {
			t.Errorf("DiscardState of %s, never adopted by that job: %v, want a refusal", c.h.Ref, err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the adopted file is gone after another job's DiscardState: %v", err)
	}
	os.Remove(path) // as the backend deletes a file no completed checkpoint references
	listed, err := a.(sdk.SharedStateLister).ListSharedState(ctx)
	if err != nil || len(listed) != 1 || listed[0].Ref != hs[0].Ref || listed[0].Size != 0 {
		t.Fatalf("ListSharedState = %+v, %v; want the adopted file, of size 0 now", listed, err)
	}
	if err := a.DiscardState(ctx, listed); err != nil {
		t.Fatal(err)
	}
	if listed, err := a.(sdk.SharedStateLister).ListSharedState(ctx); err != nil || len(listed) != 0 {
		t.Fatalf("after DiscardState ListSharedState = %+v, %v; want nothing (the marker gone)", listed, err)
	}
}

// TestAdoptRefusesAnotherMedium: a storage whose checkpoint directory is on the local disk
// refuses a file of an FS URI it does not have (s3://), with sdk.ErrUnsupported and no
// marker, so that the backend writes its bytes instead.
func TestAdoptRefusesAnotherMedium(t *testing.T) {
	s, _ := newConfigured(t, nil)
	a := newJob(t, s, "job")
	_, err := a.(sdk.RemoteFileAdopter).AdoptRemoteFiles(context.Background(), []sdk.StreamStateHandle{{Ref: "s3://bucket/tables/000001.ldb", Size: 5}})
	if !errors.Is(err, sdk.ErrUnsupported) {
		t.Fatalf("adopting an S3 object into a local storage: %v, want sdk.ErrUnsupported", err)
	}
	if listed, err := a.(sdk.SharedStateLister).ListSharedState(context.Background()); err != nil || len(listed) != 0 {
		t.Fatalf("after a refused adoption ListSharedState = %+v, %v; want nothing", listed, err)
	}
}

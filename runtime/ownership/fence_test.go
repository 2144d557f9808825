package ownership

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/sdk"
)

// TestFencedAccessRefusesWritesOnceFenced checks that, once the fence fails, every call
// of the access that deletes or creates something is refused without reaching the
// storage, while reads go on, and that the optional interfaces the runner uses survive
// the wrapping.
func TestFencedAccessRefusesWritesOnceFenced(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := fsstorage.New()
	if err := st.Configure(ctx, sdk.Options{sdk.OptionCheckpointDir: dir, sdk.OptionDataInlineThreshold: "0"}); err != nil {
		t.Fatal(err)
	}
	raw, err := st.CreateCheckpointStorage(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	errLost := errors.New("lease lost (test)")
	var fenced bool
	access := fence(raw, func() error {
		if fenced {
			return errLost
		}
		return nil
	})
	if err := access.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	write := func(loc sdk.CheckpointStorageLocation, scope sdk.Scope) sdk.StreamStateHandle {
		t.Helper()
		out, err := loc.CreateCheckpointStateOutputStream(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		out.Write([]byte("state"))
		h, err := out.CloseAndGetHandle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	publish := func(loc sdk.CheckpointStorageLocation) (sdk.CompletedCheckpointStorageLocation, error) {
		out, err := loc.CreateMetadataOutputStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out.Write([]byte("metadata"))
		return out.CloseAndFinalize(ctx)
	}
	done, err := publish(mustLocation(t, access, 1))
	if err != nil {
		t.Fatal(err)
	}
	pending := mustLocation(t, access, 2)
	shared := write(pending, sdk.ScopeShared)
	unpublished, err := pending.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unpublished.Write([]byte("metadata of 2"))

	fenced = true
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, errLost) || !strings.Contains(err.Error(), "checkpoint storage") {
			t.Fatalf("%s behind a failed fence = %v; want the fence's error", what, err)
		}
	}
	refused("DisposeCheckpoint", access.DisposeCheckpoint(ctx, done))
	refused("DiscardState", access.DiscardState(ctx, []sdk.StreamStateHandle{shared}))
	refused("DisposeOnFailure", pending.DisposeOnFailure(ctx))
	_, err = unpublished.CloseAndFinalize(ctx)
	refused("CloseAndFinalize", err)
	refused("InitializeBaseLocationsForCheckpoint", access.InitializeBaseLocationsForCheckpoint(ctx))
	_, err = access.InitializeLocationForCheckpoint(ctx, 3)
	refused("InitializeLocationForCheckpoint", err)
	_, err = access.InitializeLocationForSavepoint(ctx, 3, t.TempDir())
	refused("InitializeLocationForSavepoint", err)
	adopter, ok := access.(sdk.RemoteFileAdopter)
	if !ok {
		t.Fatal("the fenced access lost sdk.RemoteFileAdopter")
	}
	table := filepath.Join(t.TempDir(), "000001.ldb")
	os.WriteFile(table, []byte("table"), 0o644)
	_, err = adopter.AdoptRemoteFiles(ctx, []sdk.StreamStateHandle{{Ref: "file://" + table, Size: 5}})
	refused("AdoptRemoteFiles", err)

	list, err := access.ListCompletedCheckpoints(ctx)
	if err != nil || len(list) != 1 || list[0].ExternalPointer != done.ExternalPointer {
		t.Fatalf("after the refusals the completed checkpoints are %v, %v; want checkpoint 1 alone", list, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "job", "chk-2")); err != nil {
		t.Fatalf("the pending checkpoint's directory is gone: %v", err)
	}
	if l, ok := access.(sdk.SharedStateLister); !ok {
		t.Fatal("the fenced access lost sdk.SharedStateLister")
	} else if hs, err := l.ListSharedState(ctx); err != nil || len(hs) != 1 || hs[0].Ref != shared.Ref {
		t.Fatalf("ListSharedState = %v, %v; want the shared stream, still there, and no adopted file", hs, err)
	}
	if p, err := access.(sdk.LocalStateLocator).LocalStatePath(ctx, shared); err != nil || p == "" {
		t.Fatalf("LocalStatePath through the fenced access = %q, %v; want the file", p, err)
	}
	if _, ok := pending.(sdk.LocalStateFactory); !ok {
		t.Fatal("the fenced location lost sdk.LocalStateFactory")
	}
}

func mustLocation(t *testing.T, a sdk.CheckpointStorageAccess, id int64) sdk.CheckpointStorageLocation {
	t.Helper()
	loc, err := a.InitializeLocationForCheckpoint(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

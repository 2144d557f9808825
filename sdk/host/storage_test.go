package host_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func TestCheckpointStorageRoundTrip(t *testing.T) {
	p := startPlugin(t, "mem")
	ctx := ctxT(t)
	if err := p.Configure(ctx, sdk.Options{sdk.OptionDataInlineThreshold: "16", sdk.OptionSavepointDir: "sp"}); err != nil {
		t.Fatal(err)
	}
	storage, _ := p.CheckpointStorage()
	if storage.PluginInfo().Name != "mem" {
		t.Errorf("PluginInfo = %+v", storage.PluginInfo())
	}
	a, err := storage.CreateCheckpointStorage(ctx, "job")
	if err != nil {
		t.Fatal(err)
	}
	if a.SupportsHighlyAvailableStorage() || !a.HasDefaultSavepointLocation() {
		t.Errorf("HA=%v defaultSavepoint=%v, want false true", a.SupportsHighlyAvailableStorage(), a.HasDefaultSavepointLocation())
	}
	if err := a.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	loc, err := a.InitializeLocationForCheckpoint(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if loc.LocationReference() != "job/chk-1" {
		t.Errorf("LocationReference = %q", loc.LocationReference())
	}
	// A 3 MiB stream written in odd pieces, a tiny one kept inline, an empty inline one,
	// and a discarded one.
	payload := bytes.Repeat([]byte("0123456789abcdef"), 3<<16)
	out, err := loc.CreateCheckpointStateOutputStream(ctx, sdk.ScopeShared)
	if err != nil {
		t.Fatal(err)
	}
	for rest := payload; len(rest) > 0; {
		n := min(len(rest), 300_001)
		if _, err := out.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	big, err := out.CloseAndGetHandle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if big.Size != int64(len(payload)) || big.Scope != sdk.ScopeShared || big.Ref == "" || big.Inline != nil {
		t.Errorf("big handle = %+v", big)
	}
	if err := out.Close(); err != nil {
		t.Errorf("Close after CloseAndGetHandle: %v", err)
	}
	small := writeStream(t, loc, []byte("tiny"))
	if small.Ref != "" || string(small.Inline) != "tiny" {
		t.Errorf("small handle = %+v, want inline tiny", small)
	}
	empty := writeStream(t, loc, nil)
	if empty.Inline == nil || len(empty.Inline) != 0 {
		t.Errorf("empty inline handle = %#v, want non-nil empty Inline", empty.Inline)
	}
	discarded, err := loc.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := discarded.Write(payload[:2<<20]); err != nil {
		t.Fatal(err)
	}
	if err := discarded.Close(); err != nil {
		t.Fatal(err)
	}
	for _, h := range []sdk.StreamStateHandle{big, small, empty} {
		rc, err := a.OpenState(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || int64(len(got)) != h.Size {
			t.Fatalf("read back %d bytes (%v), want %d", len(got), err, h.Size)
		}
	}
	if _, err := a.OpenState(ctx, sdk.StreamStateHandle{Ref: "mem://nowhere"}); !errors.Is(err, sdk.ErrNotFound) || !strings.Contains(err.Error(), "mem://nowhere") {
		t.Errorf("OpenState of a missing ref = %v, want ErrNotFound naming it", err)
	}
	// Metadata completes the checkpoint.
	meta, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := meta.Write([]byte("metadata")); err != nil {
		t.Fatal(err)
	}
	done, err := meta.CloseAndFinalize(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if done.ExternalPointer != "job/chk-1" || done.CheckpointID != 1 || done.Time.IsZero() || done.Metadata.Size != 8 {
		t.Errorf("completed = %+v", done)
	}
	resolved, err := storage.ResolveCheckpoint(ctx, "job/chk-1")
	if err != nil || resolved.ExternalPointer != done.ExternalPointer || !resolved.Time.Equal(done.Time) {
		t.Errorf("ResolveCheckpoint = %+v, %v", resolved, err)
	}
	if _, err := storage.ResolveCheckpoint(ctx, "job/chk-9"); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("ResolveCheckpoint of nothing = %v, want ErrNotFound", err)
	}
	list, err := a.ListCompletedCheckpoints(ctx)
	if err != nil || len(list) != 1 || list[0].CheckpointID != 1 {
		t.Errorf("ListCompletedCheckpoints = %+v, %v", list, err)
	}
	// A finalized location is gone from the plugin's table.
	if err := loc.DisposeOnFailure(ctx); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("DisposeOnFailure of a finalized location = %v, want ErrNotFound", err)
	}
	// Savepoints: a default location exists; a failed one is disposed.
	sp, err := a.InitializeLocationForSavepoint(ctx, 2, "")
	if err != nil || sp.LocationReference() != "sp/savepoint-2" {
		t.Fatalf("savepoint location %v, %v", sp, err)
	}
	writeStream(t, sp, payload[:100])
	if err := sp.DisposeOnFailure(ctx); err != nil {
		t.Error(err)
	}
	if err := a.DiscardState(ctx, []sdk.StreamStateHandle{big}); err != nil {
		t.Error(err)
	}
	if _, err := a.OpenState(ctx, big); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("OpenState after DiscardState = %v, want ErrNotFound", err)
	}
	if err := a.DisposeCheckpoint(ctx, done); err != nil {
		t.Error(err)
	}
	if _, err := storage.ResolveCheckpoint(ctx, "job/chk-1"); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("ResolveCheckpoint after dispose = %v, want ErrNotFound", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.InitializeBaseLocationsForCheckpoint(ctx); !errors.Is(err, sdk.ErrNotFound) {
		t.Errorf("use after Close = %v, want ErrNotFound", err)
	}
	if _, err := storage.CreateCheckpointStorage(ctx, ""); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("CreateCheckpointStorage(\"\") = %v, want ErrInvalidArgument", err)
	}
}

func writeStream(t *testing.T, loc sdk.CheckpointStorageLocation, b []byte) sdk.StreamStateHandle {
	t.Helper()
	out, err := loc.CreateCheckpointStateOutputStream(ctxT(t), sdk.ScopeExclusive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.Write(b); err != nil {
		t.Fatal(err)
	}
	h, err := out.CloseAndGetHandle(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestStorageOnlyPlugin(t *testing.T) {
	p := startPlugin(t, "memstorage")
	if _, ok := p.StateBackend(); ok {
		t.Error("storage-only plugin offers a state backend")
	}
	if _, ok := p.CheckpointStorage(); !ok {
		t.Error("storage-only plugin offers no checkpoint storage")
	}
	if k := p.Info().Kinds; len(k) != 1 || k[0] != sdk.KindCheckpointStorage {
		t.Errorf("kinds = %v", k)
	}
}

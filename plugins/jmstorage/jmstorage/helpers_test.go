package jmstorage

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// configured returns a Storage configured with opts.
func configured(t *testing.T, opts sdk.Options) *Storage {
	t.Helper()
	s := New()
	if err := s.Configure(context.Background(), opts); err != nil {
		t.Fatalf("Configure(%v): %v", opts, err)
	}
	return s
}

// job returns the initialized access of job on s.
func job(t *testing.T, s *Storage, id string) sdk.CheckpointStorageAccess {
	t.Helper()
	a, err := s.CreateCheckpointStorage(context.Background(), id)
	if err != nil {
		t.Fatalf("CreateCheckpointStorage(%q): %v", id, err)
	}
	if err := a.InitializeBaseLocationsForCheckpoint(context.Background()); err != nil {
		t.Fatalf("InitializeBaseLocationsForCheckpoint: %v", err)
	}
	return a
}

// chkLocation initializes checkpoint id.
func chkLocation(t *testing.T, a sdk.CheckpointStorageAccess, id int64) sdk.CheckpointStorageLocation {
	t.Helper()
	loc, err := a.InitializeLocationForCheckpoint(context.Background(), id)
	if err != nil {
		t.Fatalf("InitializeLocationForCheckpoint(%d): %v", id, err)
	}
	return loc
}

// write writes data in chunks and returns the handle, or the first error.
func write(f sdk.CheckpointStreamFactory, scope sdk.Scope, data []byte, chunk int) (sdk.StreamStateHandle, error) {
	ctx := context.Background()
	out, err := f.CreateCheckpointStateOutputStream(ctx, scope)
	if err != nil {
		return sdk.StreamStateHandle{}, err
	}
	defer out.Close()
	for off := 0; off < len(data); off += chunk {
		if _, err := out.Write(data[off:min(off+chunk, len(data))]); err != nil {
			return sdk.StreamStateHandle{}, err
		}
	}
	return out.CloseAndGetHandle(ctx)
}

// mustWrite is write that fails the test on error.
func mustWrite(t *testing.T, f sdk.CheckpointStreamFactory, scope sdk.Scope, data []byte, chunk int) sdk.StreamStateHandle {
	t.Helper()
	h, err := write(f, scope, data, chunk)
	if err != nil {
		t.Fatalf("writing %d bytes (%v): %v", len(data), scope, err)
	}
	if h.Size != int64(len(data)) || h.Scope != scope {
		t.Fatalf("handle %q: size %d scope %v, want %d %v", h.Ref, h.Size, h.Scope, len(data), scope)
	}
	return h
}

// read reads a handle back.
func read(t *testing.T, a sdk.CheckpointStorageAccess, h sdk.StreamStateHandle) []byte {
	t.Helper()
	r, err := a.OpenState(context.Background(), h)
	if err != nil {
		t.Fatalf("OpenState(%q): %v", h.Ref, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkRead fails unless h reads back as want.
func checkRead(t *testing.T, a sdk.CheckpointStorageAccess, h sdk.StreamStateHandle, want []byte) {
	t.Helper()
	if got := read(t, a, h); !bytes.Equal(got, want) {
		t.Fatalf("handle %q read %d bytes that differ from the %d written", h.Ref, len(got), len(want))
	}
}

// finalize writes md as the metadata of loc.
func finalize(t *testing.T, loc sdk.CheckpointStorageLocation, md []byte) sdk.CompletedCheckpointStorageLocation {
	t.Helper()
	ctx := context.Background()
	m, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatalf("CreateMetadataOutputStream: %v", err)
	}
	m.Write(md)
	c, err := m.CloseAndFinalize(ctx)
	if err != nil {
		t.Fatalf("CloseAndFinalize: %v", err)
	}
	return c
}

// pattern returns n deterministic bytes.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 7
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

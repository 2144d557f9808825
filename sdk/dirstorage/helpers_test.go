package dirstorage

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// newConfigured returns a Storage on the local disk configured with opts plus
// dir=<temp>/ckpt, and that dir.
func newConfigured(t testing.TB, opts sdk.Options) (*Storage, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ckpt")
	all := sdk.Options{sdk.OptionCheckpointDir: dir}
	for k, v := range opts {
		all[k] = v
	}
	s, err := configure(Local{}, all)
	if err != nil {
		t.Fatalf("configure(%v): %v", all, err)
	}
	return s, dir
}

// configure returns the Storage opts describe on fsys, as a plugin's Configure makes it.
func configure(fsys FS, opts sdk.Options) (*Storage, error) {
	if err := opts.CheckKnown(OptionKeys()...); err != nil {
		return nil, err
	}
	cfg, err := ParseOptions(fsys, opts)
	if err != nil {
		return nil, err
	}
	cfg.HighlyAvailable = true
	return New(fsys, cfg), nil
}

// newJob returns the initialized access of job on s.
func newJob(t *testing.T, s *Storage, job string) sdk.CheckpointStorageAccess {
	t.Helper()
	ctx := context.Background()
	a, err := s.CreateCheckpointStorage(ctx, job)
	if err != nil {
		t.Fatalf("CreateCheckpointStorage(%q): %v", job, err)
	}
	if err := a.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatalf("InitializeBaseLocationsForCheckpoint: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// writeState writes data in chunks of chunk bytes and returns the handle.
func writeState(t *testing.T, f sdk.CheckpointStreamFactory, scope sdk.Scope, data []byte, chunk int) sdk.StreamStateHandle {
	t.Helper()
	ctx := context.Background()
	out, err := f.CreateCheckpointStateOutputStream(ctx, scope)
	if err != nil {
		t.Fatalf("CreateCheckpointStateOutputStream(%v): %v", scope, err)
	}
	for off := 0; off < len(data); off += chunk {
		end := min(off+chunk, len(data))
		if n, err := out.Write(data[off:end]); err != nil || n != end-off {
			t.Fatalf("Write at %d: n=%d err=%v", off, n, err)
		}
	}
	h, err := out.CloseAndGetHandle(ctx)
	if err != nil {
		t.Fatalf("CloseAndGetHandle: %v", err)
	}
	if err := out.Close(); err != nil {
		t.Fatalf("Close after CloseAndGetHandle: %v", err)
	}
	return h
}

// readState reads a handle back through the access.
func readState(t *testing.T, a sdk.CheckpointStorageAccess, h sdk.StreamStateHandle) []byte {
	t.Helper()
	r, err := a.OpenState(context.Background(), h)
	if err != nil {
		t.Fatalf("OpenState(%+v): %v", h.Ref, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %q: %v", h.Ref, err)
	}
	return b
}

// finalize writes metadata md to loc and finalizes it.
func finalize(t *testing.T, loc sdk.CheckpointStorageLocation, md []byte) sdk.CompletedCheckpointStorageLocation {
	t.Helper()
	ctx := context.Background()
	m, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatalf("CreateMetadataOutputStream: %v", err)
	}
	if _, err := m.Write(md); err != nil {
		t.Fatalf("metadata Write: %v", err)
	}
	c, err := m.CloseAndFinalize(ctx)
	if err != nil {
		t.Fatalf("CloseAndFinalize: %v", err)
	}
	return c
}

// completeCheckpoint creates checkpoint id with one exclusive file of 64 KiB and metadata md.
func completeCheckpoint(t *testing.T, a sdk.CheckpointStorageAccess, id int64, md []byte) (sdk.CompletedCheckpointStorageLocation, sdk.StreamStateHandle) {
	t.Helper()
	loc, err := a.InitializeLocationForCheckpoint(context.Background(), id)
	if err != nil {
		t.Fatalf("InitializeLocationForCheckpoint(%d): %v", id, err)
	}
	h := writeState(t, loc, sdk.ScopeExclusive, pattern(64<<10, byte(id)), 4096)
	return finalize(t, loc, md), h
}

// pattern returns n deterministic bytes.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// filesUnder lists the regular files below dir (relative paths).
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return out
}

// assertSame fails unless got equals want, without printing megabytes.
func assertSame(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: got %d bytes, want %d bytes (contents differ)", what, len(got), len(want))
	}
}

// faultFS is the local file system whose files fail writes once failAfter bytes were
// written to one file (a full disk), and whose SyncDir can fail.
type faultFS struct {
	Local
	failAfter   int64
	syncDirFail bool
}

func (f *faultFS) Create(name string) (File, error) {
	file, err := f.Local.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, left: f.failAfter}, nil
}

func (f *faultFS) SyncDir(name string) error {
	if f.syncDirFail {
		return &os.PathError{Op: "fsync", Path: name, Err: syscall.EIO}
	}
	return f.Local.SyncDir(name)
}

type faultFile struct {
	File
	left int64
}

func (f *faultFile) Write(p []byte) (int, error) {
	if int64(len(p)) > f.left {
		n, _ := f.File.Write(p[:f.left])
		f.left = 0
		return n, &os.PathError{Op: "write", Path: "state", Err: syscall.ENOSPC}
	}
	f.left -= int64(len(p))
	return f.File.Write(p)
}

// innerLocation returns the *location under a location of the storage.
func innerLocation(loc sdk.CheckpointStorageLocation) *location {
	if l, ok := loc.(*localLocation); ok {
		return l.location
	}
	return loc.(*location)
}

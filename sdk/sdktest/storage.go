package sdktest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// StorageFactory returns a fresh, configured checkpoint storage plugin; it registers the
// plugin's teardown with t.Cleanup.
type StorageFactory = func(t *testing.T) sdk.CheckpointStorage

// CheckpointStorage runs the checkpoint storage conformance suite against plugins made by
// factory. Every promise of sdk.CheckpointStorage, sdk.CheckpointStorageAccess and the
// location and stream types is a subtest of its own; factory is called at least once per
// subtest. The suite assumes nothing about where the storage keeps its bytes; savepoint
// targets are directories from t.TempDir.
func CheckpointStorage(t *testing.T, factory func(t *testing.T) sdk.CheckpointStorage) {
	t.Helper()
	t.Run("Plugin", func(t *testing.T) { storagePluginChecks(t, factory) })
	t.Run("Access", func(t *testing.T) { accessChecks(t, factory) })
	t.Run("Location", func(t *testing.T) { locationChecks(t, factory) })
	t.Run("Streams", func(t *testing.T) { streamChecks(t, factory) })
	t.Run("Metadata", func(t *testing.T) { metadataChecks(t, factory) })
	t.Run("ListCompletedCheckpoints", func(t *testing.T) { listChecks(t, factory) })
	t.Run("Resolve", func(t *testing.T) { resolveChecks(t, factory) })
	t.Run("Dispose", func(t *testing.T) { disposeChecks(t, factory) })
	t.Run("Savepoint", func(t *testing.T) { storageSavepointChecks(t, factory) })
	t.Run("ListSharedState", func(t *testing.T) { sharedListChecks(t, factory) })
	t.Run("Lease", func(t *testing.T) { leaseChecks(t, factory) })
	t.Run("LocalStateFiles", func(t *testing.T) { localFileChecks(t, factory) })
	t.Run("AdoptRemoteFiles", func(t *testing.T) { adoptChecks(t, factory) })
}

// openAccess creates and initializes the storage of job, closing it when t ends.
func openAccess(t *testing.T, cs sdk.CheckpointStorage, job string) sdk.CheckpointStorageAccess {
	t.Helper()
	ctx := context.Background()
	a, err := cs.CreateCheckpointStorage(ctx, job)
	if err != nil {
		t.Fatalf("CreateCheckpointStorage(%q): %v", job, err)
	}
	if a == nil {
		t.Fatalf("CreateCheckpointStorage(%q) returned a nil access and no error", job)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("closing the access of job %q: %v", job, err)
		}
	})
	if err := a.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatalf("InitializeBaseLocationsForCheckpoint of job %q: %v", job, err)
	}
	return a
}

// checkpointLocation initializes the location of checkpoint id.
func checkpointLocation(t *testing.T, a sdk.CheckpointStorageAccess, id int64) sdk.CheckpointStorageLocation {
	t.Helper()
	loc, err := a.InitializeLocationForCheckpoint(context.Background(), id)
	if err != nil {
		t.Fatalf("InitializeLocationForCheckpoint(%d): %v", id, err)
	}
	if loc == nil {
		t.Fatalf("InitializeLocationForCheckpoint(%d) returned a nil location and no error", id)
	}
	if loc.LocationReference() == "" {
		t.Errorf("location of checkpoint %d has an empty LocationReference", id)
	}
	return loc
}

// payload returns n deterministic bytes that differ by seed.
func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// smallWrites are the sizes of the writes the kit splits data into, cycling.
var smallWrites = []int{1, 13, 1000, 8192, 3}

// writeStream writes data to a new stream of f in many small writes and checks the handle.
func writeStream(t *testing.T, f sdk.CheckpointStreamFactory, scope sdk.Scope, data []byte) sdk.StreamStateHandle {
	t.Helper()
	h, err := tryWriteStream(f, scope, data)
	if err != nil {
		t.Fatal(err)
	}
	checkStreamHandle(t, h, scope, len(data))
	return h
}

// tryWriteStream is writeStream without the testing.T, for goroutines.
func tryWriteStream(f sdk.CheckpointStreamFactory, scope sdk.Scope, data []byte) (sdk.StreamStateHandle, error) {
	ctx := context.Background()
	s, err := f.CreateCheckpointStateOutputStream(ctx, scope)
	if err != nil {
		return sdk.StreamStateHandle{}, wrapf(err, "CreateCheckpointStateOutputStream(%s)", scope)
	}
	for off, i := 0, 0; off < len(data); i++ {
		n := min(smallWrites[i%len(smallWrites)], len(data)-off)
		w, err := s.Write(data[off : off+n])
		if err != nil {
			s.Close()
			return sdk.StreamStateHandle{}, wrapf(err, "writing %d bytes at offset %d of a %s stream", n, off, scope)
		}
		if w != n {
			s.Close()
			return sdk.StreamStateHandle{}, wrapf(io.ErrShortWrite, "writing %d bytes at offset %d of a %s stream: wrote %d", n, off, scope, w)
		}
		off += n
	}
	h, err := s.CloseAndGetHandle(ctx)
	if err != nil {
		return sdk.StreamStateHandle{}, wrapf(err, "CloseAndGetHandle of a %d-byte %s stream", len(data), scope)
	}
	return h, nil
}

// checkStreamHandle verifies the handle of a stream of n bytes.
func checkStreamHandle(t *testing.T, h sdk.StreamStateHandle, scope sdk.Scope, n int) {
	t.Helper()
	if h.Size != int64(n) {
		t.Errorf("handle of a %d-byte %s stream has Size %d", n, scope, h.Size)
	}
	if h.Scope != scope {
		t.Errorf("handle of a %s stream has Scope %s", scope, h.Scope)
	}
	if h.Ref == "" && len(h.Inline) != n {
		t.Errorf("handle of a %d-byte %s stream has no Ref and %d inline bytes", n, scope, len(h.Inline))
	}
	if h.Ref != "" && len(h.Inline) != 0 {
		t.Errorf("handle of a %s stream has both Ref %q and %d inline bytes", scope, h.Ref, len(h.Inline))
	}
}

// readState reads h back through a with size (and checksum) verification.
func readState(t *testing.T, a sdk.CheckpointStorageAccess, h sdk.StreamStateHandle) []byte {
	t.Helper()
	b, err := tryReadState(a, h)
	if err != nil {
		t.Fatalf("reading state handle %s: %v", describe(h), err)
	}
	return b
}

func tryReadState(a sdk.CheckpointStorageAccess, h sdk.StreamStateHandle) ([]byte, error) {
	rc, err := AccessReader(a).Open(context.Background(), h)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// checkState verifies that h reads back as want.
func checkState(t *testing.T, a sdk.CheckpointStorageAccess, h sdk.StreamStateHandle, want []byte) {
	t.Helper()
	if got := readState(t, a, h); !bytes.Equal(got, want) {
		t.Fatalf("state handle %s read back %d bytes that differ from the %d written", describe(h), len(got), len(want))
	}
}

// checkGone verifies that the bytes of h can no longer be read. Inline handles carry their
// bytes and are skipped.
func checkGone(t *testing.T, a sdk.CheckpointStorageAccess, h sdk.StreamStateHandle, why string) {
	t.Helper()
	if h.Ref == "" {
		return
	}
	if b, err := tryReadState(a, h); err == nil {
		t.Errorf("state handle %s still reads %d bytes after %s", describe(h), len(b), why)
	}
}

// finalize writes metadata in small pieces and finalizes it, checking the completed location.
func finalize(t *testing.T, loc sdk.CheckpointStorageLocation, metadata []byte) sdk.CompletedCheckpointStorageLocation {
	t.Helper()
	ctx := context.Background()
	out, err := loc.CreateMetadataOutputStream(ctx)
	if err != nil {
		t.Fatalf("CreateMetadataOutputStream at %q: %v", loc.LocationReference(), err)
	}
	for off := 0; off < len(metadata); off += 100 {
		if _, err := out.Write(metadata[off:min(off+100, len(metadata))]); err != nil {
			out.Close()
			t.Fatalf("writing metadata at %q: %v", loc.LocationReference(), err)
		}
	}
	done, err := out.CloseAndFinalize(ctx)
	if err != nil {
		t.Fatalf("CloseAndFinalize of metadata at %q: %v", loc.LocationReference(), err)
	}
	if done.ExternalPointer == "" {
		t.Errorf("completed location of %q has an empty ExternalPointer", loc.LocationReference())
	}
	if done.Metadata.Size != int64(len(metadata)) {
		t.Errorf("completed location of %q: metadata handle Size %d, want %d", loc.LocationReference(), done.Metadata.Size, len(metadata))
	}
	return done
}

// resolve resolves pointer and checks that its metadata reads back as metadata.
func resolve(t *testing.T, cs sdk.CheckpointStorage, a sdk.CheckpointStorageAccess, pointer string, metadata []byte) sdk.CompletedCheckpointStorageLocation {
	t.Helper()
	done, err := cs.ResolveCheckpoint(context.Background(), pointer)
	if err != nil {
		t.Fatalf("ResolveCheckpoint(%q): %v", pointer, err)
	}
	if got := readState(t, a, done.Metadata); !bytes.Equal(got, metadata) {
		t.Fatalf("ResolveCheckpoint(%q): metadata reads %q, want %q", pointer, cut(got), cut(metadata))
	}
	return done
}

// checkNotFound verifies that pointer does not resolve, with an error wrapping
// sdk.ErrNotFound that names the pointer.
func checkNotFound(t *testing.T, cs sdk.CheckpointStorage, pointer, why string) {
	t.Helper()
	_, err := cs.ResolveCheckpoint(context.Background(), pointer)
	if err == nil {
		t.Fatalf("ResolveCheckpoint(%q) succeeded %s; want an error wrapping sdk.ErrNotFound", pointer, why)
	}
	if !errors.Is(err, sdk.ErrNotFound) {
		t.Fatalf("ResolveCheckpoint(%q) %s: %v; want an error wrapping sdk.ErrNotFound", pointer, why, err)
	}
	if !strings.Contains(err.Error(), pointer) {
		t.Errorf("ResolveCheckpoint(%q) error %q does not name the pointer", pointer, err)
	}
}

// cut shortens bytes for messages.
func cut(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// localDir returns the directory a location reference names when it is a local directory
// that exists ("file://" URIs included), for the checks a file-based storage allows.
func localDir(ref string) (string, bool) {
	p := strings.TrimPrefix(ref, "file://")
	if !filepath.IsAbs(p) {
		return "", false
	}
	st, err := os.Stat(p)
	if err != nil || !st.IsDir() {
		return "", false
	}
	return p, true
}

// countFiles counts the regular files under dir.
func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

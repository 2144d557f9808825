package dirstorage

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// lateWriterFS is the local file system where, during the first RemoveAll of a directory,
// a late stream creates a file in it: RemoveAll then fails as os.RemoveAll does when that
// happens between its reading the directory and removing it.
type lateWriterFS struct {
	Local
	late bool
}

func (f *lateWriterFS) RemoveAll(name string) error {
	if !f.late {
		f.late = true
		if err := f.Local.RemoveAll(name); err != nil {
			return err
		}
		os.Mkdir(name, 0o755)
		os.WriteFile(filepath.Join(name, "late-state"), []byte("x"), 0o644)
		return &os.PathError{Op: "unlinkat", Path: name, Err: os.ErrExist}
	}
	return f.Local.RemoveAll(name)
}

// TestDisposeOnFailureOutlastsALateStream: a stream of the failed checkpoint that writes a
// file while the checkpoint's directory is being removed does not leave the directory
// behind (a checkpoint directory without metadata).
func TestDisposeOnFailureOutlastsALateStream(t *testing.T) {
	ctx := context.Background()
	s, _ := newConfigured(t, nil)
	a := newJob(t, s, "job")
	loc, err := a.InitializeLocationForCheckpoint(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	out, err := loc.CreateCheckpointStateOutputStream(ctx, sdk.ScopeExclusive)
	if err != nil {
		t.Fatal(err)
	}
	out.Write(make([]byte, 64<<10))
	if _, err := out.CloseAndGetHandle(ctx); err != nil {
		t.Fatal(err)
	}
	l := innerLocation(loc)
	l.s.fs = &lateWriterFS{}
	if err := loc.DisposeOnFailure(ctx); err != nil {
		t.Fatalf("dispose: %v", err)
	}
	if _, err := os.Stat(l.dir); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(l.dir)
		t.Fatalf("%s left behind (%v): %v", l.dir, err, entries)
	}
}

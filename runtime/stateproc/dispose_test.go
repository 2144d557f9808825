package stateproc_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/stateproc"
	"github.com/flowstate/flowstate/sdk"
)

// TestDispose disposes of a savepoint and of checkpoints of a finished word count: a
// pointer that does not resolve is refused, so are the job's newest checkpoint and one
// whose metadata is damaged unless forced; what is disposed of no longer resolves.
func TestDispose(t *testing.T) {
	f := runWordCount(t, config.Hashmap, false, 100<<10, 2000, 0)
	done := f.done
	if len(done) < 3 {
		t.Fatalf("%d checkpoints completed, want at least 3", len(done))
	}
	newest, older, oldest := done[len(done)-1].Location.ExternalPointer, done[len(done)-2].Location.ExternalPointer, done[0].Location.ExternalPointer
	gone := func(pointer string) {
		t.Helper()
		if _, err := os.Stat(pointer); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s still exists after Dispose (%v)", pointer, err)
		}
		if _, err := stateproc.Open(bg, f.storage, f.access, pointer); !errors.Is(err, sdk.ErrNotFound) {
			t.Fatalf("Open of disposed %s: %v, want ErrNotFound", pointer, err)
		}
	}

	sp, err := f.open(t, newest).RescaleKeys(bg, 128, "")
	if err != nil {
		t.Fatal(err)
	}
	d, err := stateproc.Dispose(bg, f.storage, f.access, sp.ExternalPointer, stateproc.DisposeOptions{})
	if err != nil || !d.Metadata.Savepoint || d.Location.ExternalPointer != sp.ExternalPointer {
		t.Fatalf("Dispose of savepoint %s: %+v, %v", sp.ExternalPointer, d, err)
	}
	gone(sp.ExternalPointer)

	bogus := filepath.Join(f.dir, "no-such-savepoint")
	if _, err := stateproc.Dispose(bg, f.storage, f.access, bogus, stateproc.DisposeOptions{Force: true}); !errors.Is(err, sdk.ErrNotFound) || !strings.Contains(err.Error(), bogus) {
		t.Fatalf("Dispose of %s: %v, want ErrNotFound naming it", bogus, err)
	}

	if _, err := stateproc.Dispose(bg, f.storage, f.access, newest, stateproc.DisposeOptions{}); !errors.Is(err, stateproc.ErrInUse) || !strings.Contains(err.Error(), "newest") {
		t.Fatalf("Dispose of the newest checkpoint: %v, want ErrInUse", err)
	}
	f.open(t, newest) // still there
	if _, err := stateproc.Dispose(bg, f.storage, f.access, older, stateproc.DisposeOptions{}); err != nil {
		t.Fatal(err)
	}
	gone(older)

	meta := filepath.Join(oldest, "_metadata")
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(meta, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := stateproc.Dispose(bg, f.storage, f.access, oldest, stateproc.DisposeOptions{}); !errors.Is(err, stateproc.ErrInUse) || !errors.Is(err, sdk.ErrCorrupt) {
		t.Fatalf("Dispose of a checkpoint with damaged metadata: %v, want ErrInUse and ErrCorrupt", err)
	}
	d, err = stateproc.Dispose(bg, f.storage, f.access, oldest, stateproc.DisposeOptions{Force: true})
	if err != nil || d.Metadata != nil {
		t.Fatalf("forced Dispose of damaged %s: %+v, %v", oldest, d, err)
	}
	gone(oldest)

	if _, err := stateproc.Dispose(bg, f.storage, f.access, newest, stateproc.DisposeOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	gone(newest)
}

// TestDisposeStaysInTheConfiguredDirectories: a savepoint outside the configured
// checkpoint and savepoint directories, named through "../" from the checkpoint directory,
// is refused without Outside, and all of it stays; with Outside its own files go, while a
// file of someone else's in it stays, with the directory, and the error names it. A
// savepoint in the savepoint directory goes whole, and its neighbours stay.
func TestDisposeStaysInTheConfiguredDirectories(t *testing.T) {
	f := runWordCount(t, config.Hashmap, false, 64<<10, 2000, 0)
	newest := f.done[len(f.done)-1].Location.ExternalPointer
	dirs := map[string]string{config.KeyCheckpointDir: f.checkpoints, config.KeySavepointDir: f.savepoints}

	victim := filepath.Join(t.TempDir(), "victim")
	sp, err := f.open(t, newest).RescaleKeys(bg, 64, victim)
	if err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(sp.ExternalPointer, "not-the-savepoints.txt")
	if err := os.WriteFile(foreign, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := listFiles(t, victim)
	climb := f.checkpoints + strings.Repeat("/..", strings.Count(f.checkpoints, "/")) + sp.ExternalPointer
	_, err = stateproc.Dispose(bg, f.storage, f.access, climb, stateproc.DisposeOptions{Dirs: dirs})
	if !errors.Is(err, stateproc.ErrOutside) || !strings.Contains(err.Error(), sp.ExternalPointer) || !strings.Contains(err.Error(), "--force-outside") {
		t.Fatalf("Dispose of %s: %v; want a refusal naming it and --force-outside", climb, err)
	}
	if after := listFiles(t, victim); !slices.Equal(before, after) {
		t.Fatalf("the refused disposal changed %s from %v to %v", victim, before, after)
	}

	_, err = stateproc.Dispose(bg, f.storage, f.access, climb, stateproc.DisposeOptions{Dirs: dirs, Outside: true})
	if err == nil || !strings.Contains(err.Error(), "not-the-savepoints.txt") {
		t.Fatalf("Dispose with Outside of a savepoint holding a foreign file: %v; want an error naming the file", err)
	}
	rel, _ := filepath.Rel(victim, foreign)
	if after := listFiles(t, victim); !slices.Equal(after, []string{rel}) {
		t.Fatalf("after the disposal %s holds %v, want only %s", victim, after, rel)
	}

	inside, err := f.open(t, newest).RescaleKeys(bg, 64, "")
	if err != nil {
		t.Fatal(err)
	}
	neighbour := filepath.Join(f.savepoints, "neighbour.txt")
	if err := os.WriteFile(neighbour, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := stateproc.Dispose(bg, f.storage, f.access, inside.ExternalPointer, stateproc.DisposeOptions{Dirs: dirs}); err != nil {
		t.Fatal(err)
	}
	if got := listFiles(t, f.savepoints); !slices.Equal(got, []string{"neighbour.txt"}) {
		t.Fatalf("after the disposal of %s the savepoint directory holds %v, want only neighbour.txt", inside.ExternalPointer, got)
	}
}

// listFiles returns the regular files below dir, as paths relative to it.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

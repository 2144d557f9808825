package stateproc_test

import (
	"errors"
	"os"
	"path/filepath"
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
	d, err := stateproc.Dispose(bg, f.storage, f.access, sp.ExternalPointer, false)
	if err != nil || !d.Metadata.Savepoint || d.Location.ExternalPointer != sp.ExternalPointer {
		t.Fatalf("Dispose of savepoint %s: %+v, %v", sp.ExternalPointer, d, err)
	}
	gone(sp.ExternalPointer)

	bogus := filepath.Join(f.dir, "no-such-savepoint")
	if _, err := stateproc.Dispose(bg, f.storage, f.access, bogus, true); !errors.Is(err, sdk.ErrNotFound) || !strings.Contains(err.Error(), bogus) {
		t.Fatalf("Dispose of %s: %v, want ErrNotFound naming it", bogus, err)
	}

	if _, err := stateproc.Dispose(bg, f.storage, f.access, newest, false); !errors.Is(err, stateproc.ErrInUse) || !strings.Contains(err.Error(), "newest") {
		t.Fatalf("Dispose of the newest checkpoint: %v, want ErrInUse", err)
	}
	f.open(t, newest) // still there
	if _, err := stateproc.Dispose(bg, f.storage, f.access, older, false); err != nil {
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
	if _, err := stateproc.Dispose(bg, f.storage, f.access, oldest, false); !errors.Is(err, stateproc.ErrInUse) || !errors.Is(err, sdk.ErrCorrupt) {
		t.Fatalf("Dispose of a checkpoint with damaged metadata: %v, want ErrInUse and ErrCorrupt", err)
	}
	d, err = stateproc.Dispose(bg, f.storage, f.access, oldest, true)
	if err != nil || d.Metadata != nil {
		t.Fatalf("forced Dispose of damaged %s: %+v, %v", oldest, d, err)
	}
	gone(oldest)

	if _, err := stateproc.Dispose(bg, f.storage, f.access, newest, true); err != nil {
		t.Fatal(err)
	}
	gone(newest)
}

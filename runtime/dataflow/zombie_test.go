package dataflow_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// zombieID is the id of the zombie's late checkpoint: higher than any its successor
// reaches, as when the zombie had started (and failed) checkpoints its successor never
// saw, so that ordering by id alone would restore it.
const zombieID = 1000

// takeOver does what a runner that takes the job over with `--from latest` does before
// its first attempt (runtime/runner's recovery): a new access and store, the listing (its
// ids observed), the newest checkpoint by checkpoint.Newest, the rewind of the output
// committed after it and the adoption of the earlier ones. It returns the store and the
// restored checkpoint.
func (f *fixture) takeOver(t *testing.T, j *dataflow.Job) (*checkpoint.Store, *checkpoint.Completed) {
	t.Helper()
	ctx := context.Background()
	access, err := f.storage.CreateCheckpointStorage(ctx, "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	if err := access.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	store := checkpoint.NewStore(access, 2)
	list, err := store.List(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := checkpoint.Newest(ctx, access, list, "wordcount", 0, 0, hclog.NewNullLogger())
	if err != nil {
		t.Fatalf("--from latest: %v", err)
	}
	if _, _, err := j.RewindOutput(ctx, c.Metadata.CheckpointID); err != nil {
		t.Fatal(err)
	}
	store.Adopt(ctx, c, list, 0, hclog.NewNullLogger())
	return store, c
}

// TestZombieMetadataLandingAfterATakeoverIsNotRestored: the runner of epoch 1 completes
// two checkpoints, then loses its lease while the metadata of checkpoint 1000 is written
// (fenced once it is on disk: neither reported nor committed). That metadata is held back
// (a write still under way) while the runner of epoch 2 takes the job over with `--from
// latest` (checkpoint 2), runs it to its end and commits all of its output, at ids below
// 1000. Then the zombie's metadata lands. A third runner's `--from latest` restores the
// last checkpoint of epoch 2, not the zombie's higher id, and the output is exact.
func TestZombieMetadataLandingAfterATakeoverIsNotRestored(t *testing.T) {
	f := newFixture(t, 4<<20, nil)
	jobDir := filepath.Join(filepath.Dir(f.input), "checkpoints", "wordcount")
	zombieDir := filepath.Join(jobDir, "chk-1000")

	// Epoch 1: fenced from the moment its checkpoint 1000's metadata is on disk. What it
	// wrote of that checkpoint is held back then, as a write still under way: the fenced
	// access of a runner would refuse to dispose of it, this test's does not.
	held := filepath.Join(filepath.Dir(f.input), "held-back")
	env := f.env(nil, nil)
	env.Epoch = func() int64 { return 1 }
	var landed atomic.Bool
	var holdErr error
	env.Fence = func() error {
		if landed.Load() {
			return errFenced
		}
		if _, err := os.Stat(filepath.Join(zombieDir, "_metadata")); err == nil {
			landed.Store(true)
			holdErr = os.CopyFS(held, os.DirFS(zombieDir))
			return errFenced
		}
		return nil
	}
	completed := 0
	env.OnCheckpoint = func(c *checkpoint.Completed) {
		if completed++; completed == 2 {
			f.store.ObserveID(zombieID - 1) // the ids of checkpoints it started and never completed
		}
	}
	if err := dataflow.Run(context.Background(), f.job(t, 2), env); !errors.Is(err, errFenced) {
		t.Fatalf("run of epoch 1 = %v; want the fence's error once checkpoint %d's metadata landed", err, zombieID)
	}
	if !landed.Load() || completed != 2 {
		t.Fatalf("epoch 1: metadata of checkpoint %d landed: %v, %d checkpoints completed; want it landed after 2 completed", zombieID, landed.Load(), completed)
	}
	if holdErr != nil {
		t.Fatalf("holding back checkpoint %d: %v", zombieID, holdErr)
	}
	if _, err := os.Stat(zombieDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("checkpoint %d is in the storage when the successor starts: %v", zombieID, err)
	}

	// Epoch 2 takes over from checkpoint 2 and runs the job to its end.
	j := f.job(t, 2)
	store, c := f.takeOver(t, j)
	if c.Metadata.CheckpointID != 2 || c.Metadata.Epoch != 1 {
		t.Fatalf("epoch 2 restores checkpoint %d of epoch %d; want 2 of epoch 1", c.Metadata.CheckpointID, c.Metadata.Epoch)
	}
	f.store = store
	env = f.env(nil, c.Metadata)
	env.Epoch = func() int64 { return 2 }
	var last *checkpoint.Completed
	env.OnCheckpoint = func(c *checkpoint.Completed) { last = c }
	if err := dataflow.Run(context.Background(), j, env); err != nil {
		t.Fatalf("run of epoch 2: %v", err)
	}
	if last == nil || last.Metadata.Epoch != 2 || last.Metadata.CheckpointID >= zombieID {
		t.Fatalf("epoch 2 ended with checkpoint %+v; want one of epoch 2 below %d", last, zombieID)
	}
	if err := wordcheck.Check(f.expected, f.output); err != nil {
		t.Fatalf("output of epoch 2: %v", err)
	}

	// The zombie's metadata lands, whole, with the state it references.
	if err := os.Rename(held, zombieDir); err != nil {
		t.Fatal(err)
	}
	zombie, err := checkpoint.Resolve(context.Background(), f.storage, store.Access(), zombieDir, false, 0)
	if err != nil || zombie.Metadata.Epoch != 1 || zombie.Metadata.CheckpointID != zombieID {
		t.Fatalf("the zombie's checkpoint %s does not resolve as checkpoint %d of epoch 1: %v", zombieDir, zombieID, err)
	}
	j = f.job(t, 2)
	store, c = f.takeOver(t, j)
	if c.Metadata.Epoch != 2 || c.Metadata.CheckpointID != last.Metadata.CheckpointID {
		t.Fatalf("--from latest after the zombie's metadata landed restores checkpoint %d of epoch %d; want %d of epoch 2",
			c.Metadata.CheckpointID, c.Metadata.Epoch, last.Metadata.CheckpointID)
	}
	// Retention ranks the zombie's checkpoint below epoch 2's: it is disposed of first.
	if _, err := os.Stat(zombieDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the zombie's checkpoint %s outlived retention (num-retained 2) beside epoch 2's: %v", zombieDir, err)
	}
	f.store = store
	env = f.env(nil, c.Metadata)
	env.Epoch = func() int64 { return 3 }
	if err := dataflow.Run(context.Background(), j, env); err != nil {
		t.Fatalf("run of epoch 3: %v", err)
	}
	if err := wordcheck.Check(f.expected, f.output); err != nil {
		t.Fatalf("output after --from latest with the zombie's checkpoint %d in the storage: %v", zombieID, err)
	}
}

package dataflow_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

var errFenced = errors.New("lease lost (test)")

// TestFenceStopsEveryCommit fences the job from the moment its first checkpoint completes
// (before any sink hears of it): no later checkpoint is published, no sink commits, and
// the run fails with the fence's error.
func TestFenceStopsEveryCommit(t *testing.T) {
	f := newFixture(t, 2<<20, nil)
	var fenced atomic.Bool
	completed := 0
	env := f.env(nil, nil)
	env.Fence = func() error {
		if fenced.Load() {
			return errFenced
		}
		return nil
	}
	env.OnCheckpoint = func(*checkpoint.Completed) {
		completed++
		fenced.Store(true)
	}
	err := dataflow.Run(context.Background(), f.job(t, 2), env)
	if !errors.Is(err, errFenced) {
		t.Fatalf("Run of a fenced job = %v; want the fence's error", err)
	}
	if completed != 1 {
		t.Fatalf("%d checkpoints completed; want only the one before the fence", completed)
	}
	if files, err := connectors.CommittedFiles(f.output); err != nil || len(files) != 0 {
		t.Fatalf("committed output after the fence: %v, %v; want none", files, err)
	}
}

// TestFenceStopsTheSinkOpening: a fenced attempt does not open its sink, which would
// commit restored transactions and discard uncommitted files.
func TestFenceStopsTheSinkOpening(t *testing.T) {
	f := newFixture(t, 1<<20, nil)
	env := f.env(nil, nil)
	env.Fence = func() error { return errFenced }
	if err := dataflow.Run(context.Background(), f.job(t, 2), env); !errors.Is(err, errFenced) {
		t.Fatalf("Run of a fenced job = %v; want the fence's error", err)
	}
	if _, err := os.Stat(f.output); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the fenced sink opened its output directory: %v", err)
	}
}

// TestFenceAfterPublishStopsTheCompletion: a runner that loses its lease while its metadata
// is written (frozen mid-write, say) completes nothing: the fence, asked again once the
// write returns, stops the checkpoint before it is reported, retained or committed.
func TestFenceAfterPublishStopsTheCompletion(t *testing.T) {
	f := newFixture(t, 2<<20, nil)
	metadata := filepath.Join(filepath.Dir(f.input), "checkpoints", "wordcount", "chk-*", "_metadata")
	env := f.env(nil, nil)
	var sawMetadata atomic.Bool
	env.Fence = func() error { // lost from the moment a checkpoint's metadata is on disk
		if sawMetadata.Load() {
			return errFenced
		}
		if m, _ := filepath.Glob(metadata); len(m) > 0 {
			sawMetadata.Store(true)
			return errFenced
		}
		return nil
	}
	completed := 0
	env.OnCheckpoint = func(*checkpoint.Completed) { completed++ }
	if err := dataflow.Run(context.Background(), f.job(t, 2), env); !errors.Is(err, errFenced) {
		t.Fatalf("Run of a job fenced during its publish = %v; want the fence's error", err)
	}
	if !sawMetadata.Load() {
		t.Fatal("the fence never saw a checkpoint's metadata: the test fenced nothing mid-publish")
	}
	if completed != 0 {
		t.Fatalf("%d checkpoints completed after the fence; want none", completed)
	}
	if files, err := connectors.CommittedFiles(f.output); err != nil || len(files) != 0 {
		t.Fatalf("committed output after the fence: %v, %v; want none", files, err)
	}
}

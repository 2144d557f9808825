package dataflow_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// splitInput replaces the fixture's input by a directory of files, so that several
// source subtasks read.
func (f *fixture) splitInput(t *testing.T, files, size int) {
	t.Helper()
	dir := filepath.Join(filepath.Dir(f.input), "in")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < files; i++ {
		if err := wordcheck.WriteText(filepath.Join(dir, fmt.Sprintf("part-%02d.txt", i)), size/files, 5000, int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	f.input = dir
	var err error
	if f.expected, err = wordcheck.Expected(dir); err != nil {
		t.Fatal(err)
	}
}

var errCrash = errors.New("injected crash")

// crashAfterCheckpoint fails its reads once a checkpoint of the attempt completed
// (checkpointed is closed), and holds back the end of its input until then, so the
// attempt always fails and the next one is restored from a checkpoint.
type crashAfterCheckpoint struct {
	dataflow.Source
	checkpointed <-chan struct{}
}

type crashReader struct {
	dataflow.SourceReader
	c   *crashAfterCheckpoint
	eof bool
}

func (c *crashAfterCheckpoint) Open(ctx context.Context, i, p int, pos []byte) (dataflow.SourceReader, error) {
	r, err := c.Source.Open(ctx, i, p, pos)
	return &crashReader{SourceReader: r, c: c}, err
}

func (r *crashReader) Read(ctx context.Context, max int, emit func(any)) error {
	select {
	case <-r.c.checkpointed:
		return errCrash
	default:
	}
	if r.eof {
		// Read again shortly: the source subtask serves barriers between reads.
		select {
		case <-r.c.checkpointed:
			return errCrash
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
			return nil
		}
	}
	err := r.SourceReader.Read(ctx, max, emit)
	if errors.Is(err, io.EOF) {
		r.eof = true
		return nil
	}
	return err
}

// runCrashAndRestore runs the word count at parallelism p: a first attempt that crashes
// after its first completed checkpoint, then a second restored from the latest one.
func runCrashAndRestore(t *testing.T, f *fixture, p int, atLeastOnce bool) {
	t.Helper()
	checkpointed := make(chan struct{})
	var once sync.Once
	j := f.job(t, p)
	j.WrapSource(func(s dataflow.Source) dataflow.Source {
		return &crashAfterCheckpoint{Source: s, checkpointed: checkpointed}
	})
	env := f.env(nil, nil)
	env.AtLeastOnce = atLeastOnce
	env.OnCheckpoint = func(*checkpoint.Completed) { once.Do(func() { close(checkpointed) }) }
	if err := dataflow.Run(context.Background(), j, env); !errors.Is(err, errCrash) {
		t.Fatalf("first attempt: %v, want the injected crash", err)
	}
	latest := f.store.Latest()
	if latest == nil {
		t.Fatal("the first attempt crashed after a completed checkpoint, yet none is retained")
	}
	stats := &dataflow.RunStats{}
	env = f.env(stats, latest.Metadata)
	env.AtLeastOnce = atLeastOnce
	if err := dataflow.Run(context.Background(), f.job(t, p), env); err != nil {
		t.Fatalf("attempt restored from checkpoint %d: %v", latest.Metadata.CheckpointID, err)
	}
	t.Logf("p=%d: restored from checkpoint %d; the second attempt took %d checkpoints", p, latest.Metadata.CheckpointID, stats.Checkpoints)
}

func TestWordCountIsExactAtEveryParallelism(t *testing.T) {
	for _, p := range []int{1, 3, 64} {
		t.Run(fmt.Sprint("p=", p), func(t *testing.T) {
			f := newFixture(t, 1, nil)
			f.splitInput(t, 8, 1<<20)
			stats := &dataflow.RunStats{}
			if err := dataflow.Run(context.Background(), f.job(t, p), f.env(stats, nil)); err != nil {
				t.Fatal(err)
			}
			if err := wordcheck.Check(f.expected, f.output); err != nil {
				t.Fatalf("uninterrupted run: %v", err)
			}
			if stats.Checkpoints < 2 {
				t.Fatalf("only %d checkpoints completed: the periodic ones did not run", stats.Checkpoints)
			}
			// Again from scratch, with a crash and a restore.
			f.output = filepath.Join(t.TempDir(), "out")
			runCrashAndRestore(t, f, p, false)
			if err := wordcheck.Check(f.expected, f.output); err != nil {
				t.Fatalf("after a crash and a restore: %v", err)
			}
		})
	}
}

func TestAtLeastOnceProcessesEveryRecord(t *testing.T) {
	f := newFixture(t, 1, nil)
	f.splitInput(t, 4, 1<<20)
	env := f.env(nil, nil)
	env.AtLeastOnce = true
	if err := dataflow.Run(context.Background(), f.job(t, 3), env); err != nil {
		t.Fatal(err)
	}
	// Without a failure nothing is processed twice.
	if err := wordcheck.Check(f.expected, f.output); err != nil {
		t.Fatalf("at-least-once run without failure: %v", err)
	}
	f.output = filepath.Join(t.TempDir(), "out")
	runCrashAndRestore(t, f, 3, true)
	if err := wordcheck.CheckAtLeastOnce(f.expected, f.output); err != nil {
		t.Fatal(err)
	}
}

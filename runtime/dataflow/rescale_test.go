package dataflow_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// crashingRescalable is crashAfterCheckpoint over a source that redistributes.
type crashingRescalable struct {
	*crashAfterCheckpoint
	r dataflow.Redistributor
}

func (c crashingRescalable) Redistribute(states [][]byte, p int) ([][]byte, error) {
	return c.r.Redistribute(states, p)
}

// TestWordCountRestoredAtAnotherParallelismIsExact runs a word count over 8 files at the
// first parallelism of each sequence, crashes it after a checkpoint of the attempt, and
// restores it at the next parallelism, as the runner does (output committed after the
// checkpoint moved aside, then the restore): the keyed counts, the source's splits and
// the sink's pending files are all redistributed, and the output is exact.
func TestWordCountRestoredAtAnotherParallelismIsExact(t *testing.T) {
	for _, ps := range [][]int{{2, 3, 1}, {1, 4, 2}} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			f := newFixture(t, 1, nil)
			f.splitInput(t, 8, 1<<20)
			ctx := context.Background()
			var restore *checkpoint.Metadata
			for k, p := range ps {
				j := f.job(t, p)
				last := k == len(ps)-1
				checkpointed := make(chan struct{})
				var once sync.Once
				if !last {
					j.WrapSource(func(s dataflow.Source) dataflow.Source {
						return crashingRescalable{&crashAfterCheckpoint{Source: s, checkpointed: checkpointed}, s.(dataflow.Redistributor)}
					})
				}
				env := f.env(nil, restore)
				env.OnCheckpoint = func(*checkpoint.Completed) { once.Do(func() { close(checkpointed) }) }
				err := dataflow.Run(ctx, j, env)
				if last {
					if err != nil {
						t.Fatalf("p=%d, restored from checkpoint %d: %v", p, restore.CheckpointID, err)
					}
					break
				}
				if !errors.Is(err, errCrash) {
					t.Fatalf("p=%d: %v, want the injected crash", p, err)
				}
				latest := f.store.Latest()
				if latest == nil || restore != nil && latest.Metadata.CheckpointID <= restore.CheckpointID {
					t.Fatalf("p=%d crashed after a checkpoint of its own, yet none is retained", p)
				}
				restore = latest.Metadata
				for _, op := range restore.Operators {
					if op.Parallelism != p || len(op.Subtasks) != p {
						t.Fatalf("checkpoint %d: operator %s has parallelism %d and %d subtasks, want %d", restore.CheckpointID, op.ID, op.Parallelism, len(op.Subtasks), p)
					}
				}
				if _, _, err := j.RewindOutput(ctx, restore.CheckpointID); err != nil {
					t.Fatal(err)
				}
				t.Logf("p=%d crashed after checkpoint %d", p, restore.CheckpointID)
			}
			if err := wordcheck.Check(f.expected, f.output); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestDrainCommitsWhatWasReadAndFinishes drains a rate-limited word count once a
// checkpoint completed (runner stop --drain): Run returns nil, the reply names a savepoint
// whose source is finished, and the committed output is exactly the counts of the lines
// the sources had read by the savepoint (the positions it records), no more, no fewer,
// though the input was not read to its end. Restored from the savepoint, the job finishes
// at once and commits nothing more.
func TestDrainCommitsWhatWasReadAndFinishes(t *testing.T) {
	f := newFixture(t, 1, nil)
	f.splitInput(t, 4, 1<<20)
	ctx := context.Background()
	j := f.job(t, 2)
	j.Rate = 20000
	requests := make(chan dataflow.SavepointRequest, 1)
	reply := make(chan dataflow.SavepointResult, 1)
	var once sync.Once
	env := f.env(nil, nil)
	env.Savepoints = requests
	env.OnCheckpoint = func(*checkpoint.Completed) {
		once.Do(func() {
			requests <- dataflow.SavepointRequest{Target: filepath.Join(t.TempDir(), "sp"), Stop: true, Drain: true, Reply: reply}
		})
	}
	if err := dataflow.Run(ctx, j, env); err != nil {
		t.Fatalf("drained run: %v", err)
	}
	var res dataflow.SavepointResult
	select {
	case res = <-reply:
	default:
		t.Fatal("Run returned without answering the drain request")
	}
	if res.Err != nil {
		t.Fatalf("drain: %v", res.Err)
	}
	m, err := checkpoint.Load(ctx, f.store.Access(), res.Location)
	if err != nil {
		t.Fatal(err)
	}
	src := m.Operator("source")
	if !m.Savepoint || src == nil || !src.Finished {
		t.Fatalf("the drain's savepoint %s: savepoint %v, source %+v; want a savepoint with a finished source", res.Location.ExternalPointer, m.Savepoint, src)
	}
	var positions [][]byte
	for _, st := range src.Subtasks {
		positions = append(positions, st.Operator)
	}
	unread, err := wordcheck.UnreadFrom(f.input, positions)
	if err != nil {
		t.Fatal(err)
	}
	read, err := wordcheck.ExpectedExcept(f.input, unread)
	if err != nil {
		t.Fatal(err)
	}
	if err := wordcheck.Check(read, f.output); err != nil {
		t.Fatalf("output of the drained run against the lines read by the savepoint: %v", err)
	}
	if len(unread) == 0 || wordcheck.Check(f.expected, f.output) == nil {
		t.Fatal("the whole input was read before the drain: the test proves nothing; raise the input or lower the rate")
	}
	before := committedFiles(t, f.output)
	// Restored from the drained savepoint, the job finishes at once.
	stats := &dataflow.RunStats{}
	start := time.Now()
	if err := dataflow.Run(ctx, f.job(t, 3), f.env(stats, m)); err != nil {
		t.Fatalf("restored from the drained savepoint at parallelism 3: %v", err)
	}
	if stats.Records != 0 {
		t.Fatalf("restored from the drained savepoint, the job processed %d records, want none", stats.Records)
	}
	if err := wordcheck.Check(read, f.output); err != nil {
		t.Fatalf("after the restore from the drained savepoint: %v", err)
	}
	if after := committedFiles(t, f.output); len(after) != len(before) {
		t.Fatalf("committed part files %d before the restore, %d after", len(before), len(after))
	}
	t.Logf("drained with %d unread ranges; the restore finished in %s", len(unread), time.Since(start).Round(time.Millisecond))
}

func committedFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := connectors.CommittedFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

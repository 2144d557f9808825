package dataflow_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/plugins/jmstorage/jmstorage"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/sdk"
)

type fixture struct {
	input, output string
	expected      map[string]int64
	backend       sdk.StateBackend
	storage       sdk.CheckpointStorage
	store         *checkpoint.Store
}

func newFixture(t *testing.T, size int, storage sdk.CheckpointStorage) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	f := &fixture{input: filepath.Join(dir, "in.txt"), output: filepath.Join(dir, "out")}
	if err := wordcheck.WriteText(f.input, size, 5000, 1); err != nil {
		t.Fatal(err)
	}
	var err error
	if f.expected, err = wordcheck.Expected(f.input); err != nil {
		t.Fatal(err)
	}
	f.backend = hashmap.New()
	if err := f.backend.Configure(ctx, sdk.Options{}); err != nil {
		t.Fatal(err)
	}
	if storage == nil {
		storage = fsstorage.New()
		if err := storage.Configure(ctx, sdk.Options{"dir": filepath.Join(dir, "checkpoints")}); err != nil {
			t.Fatal(err)
		}
	}
	f.storage = storage
	access, err := storage.CreateCheckpointStorage(ctx, "wordcount")
	if err != nil {
		t.Fatal(err)
	}
	if err := access.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		t.Fatal(err)
	}
	f.store = checkpoint.NewStore(access, 2)
	return f
}

func (f *fixture) job(t *testing.T, p int) *dataflow.Job {
	t.Helper()
	j, err := jobs.WordCount(jobs.Spec{Name: "wordcount", Parallelism: p, Input: f.input, Output: f.output, BatchSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func (f *fixture) env(stats *dataflow.RunStats, restore *checkpoint.Metadata) dataflow.Env {
	return dataflow.Env{Backend: f.backend, BackendName: "hashmap", Checkpoints: f.store, Restore: restore,
		Interval: 10 * time.Millisecond, Timeout: time.Minute, Stats: stats}
}

func TestWordCountIsExactAndBatched(t *testing.T) {
	f := newFixture(t, 2<<20, nil)
	stats := &dataflow.RunStats{}
	if err := dataflow.Run(context.Background(), f.job(t, 2), f.env(stats, nil)); err != nil {
		t.Fatal(err)
	}
	if err := wordcheck.Check(f.expected, f.output); err != nil {
		t.Fatal(err)
	}
	calls := float64(stats.GetCalls + stats.WriteCalls)
	perRecord := calls / float64(stats.Records)
	t.Logf("%d records, %d state calls (%.5f per record), %d checkpoints", stats.Records, int(calls), perRecord, stats.Checkpoints)
	if perRecord >= 0.01 {
		t.Fatalf("%.4f state calls per record: state access is not batched (want < 0.01)", perRecord)
	}
	if stats.Checkpoints < 2 {
		t.Fatalf("only %d checkpoints completed", stats.Checkpoints)
	}
}

// failingSource fails its reads once, after a number of them, as a crashing task would.
type failingSource struct {
	dataflow.Source
	after int64
	reads *atomic.Int64
}

type failingReader struct {
	dataflow.SourceReader
	s *failingSource
}

func (s *failingSource) Open(ctx context.Context, i, p int, pos []byte) (dataflow.SourceReader, error) {
	r, err := s.Source.Open(ctx, i, p, pos)
	return &failingReader{r, s}, err
}

func (r *failingReader) Read(ctx context.Context, max int, emit func(any)) error {
	if r.s.reads.Add(1) == r.s.after {
		return errors.New("injected failure")
	}
	return r.SourceReader.Read(ctx, max, emit)
}

func TestRecoveryFromLatestCheckpointIsExactlyOnce(t *testing.T) {
	f := newFixture(t, 2<<20, nil)
	var reads atomic.Int64
	failures := 0
	var restore *checkpoint.Metadata
	for attempt := 0; ; attempt++ {
		if attempt > 10 {
			t.Fatal("job did not finish in 10 attempts")
		}
		j := f.job(t, 2)
		reads.Store(0)
		j.WrapSource(func(s dataflow.Source) dataflow.Source {
			return &failingSource{Source: s, after: 40 + int64(attempt)*10, reads: &reads}
		})
		err := dataflow.Run(context.Background(), j, f.env(nil, restore))
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "injected failure") {
			t.Fatal(err)
		}
		failures++
		if l := f.store.Latest(); l != nil {
			restore = l.Metadata
		} else {
			restore = nil
		}
	}
	if failures == 0 {
		t.Fatal("no failure was injected")
	}
	if err := wordcheck.Check(f.expected, f.output); err != nil {
		t.Fatalf("after %d failures: %v", failures, err)
	}
}

func TestFailedCheckpointsCountAgainstTolerable(t *testing.T) {
	jm := jmstorage.New()
	if err := jm.Configure(context.Background(), sdk.Options{"max-state-size": "64kb"}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, 4<<20, jm)
	rec := &recordingBackend{StateBackend: f.backend}
	f.backend = rec
	env := f.env(nil, nil)
	env.TolerableFailures = 2
	err := dataflow.Run(context.Background(), f.job(t, 1), env)
	if err == nil {
		t.Fatal("a job whose state exceeds jmstorage's limit finished without error")
	}
	for _, want := range []string{"maxSize=65536", "tolerable-failed-checkpoints (2)", "3 consecutive"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error does not say %q: %v", want, err)
		}
	}
	if n := rec.aborted.Load(); n < 1 {
		t.Fatalf("keyed backends were told of %d aborted checkpoints, want at least 1", n)
	}
}

// recordingBackend counts the aborted-checkpoint notifications its keyed backends get.
type recordingBackend struct {
	sdk.StateBackend
	aborted atomic.Int64
}

type recordingKeyed struct {
	sdk.KeyedStateBackend
	b *recordingBackend
}

func (r *recordingBackend) CreateKeyedStateBackend(ctx context.Context, p sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	kb, err := r.StateBackend.CreateKeyedStateBackend(ctx, p)
	return &recordingKeyed{kb, r}, err
}

func (k *recordingKeyed) NotifyCheckpointAborted(ctx context.Context, id int64) error {
	k.b.aborted.Add(1)
	return k.KeyedStateBackend.NotifyCheckpointAborted(ctx, id)
}

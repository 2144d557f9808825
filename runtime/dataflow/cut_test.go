package dataflow_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/plugins/jmstorage/jmstorage"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/runtime/state"
	"github.com/flowstate/flowstate/sdk"
)

// memExchange is an exchange of a cut job in memory: a log of committed records per
// partition, which writers append to when their checkpoint completes and readers read,
// ending once every writer flushed. It stands in for the repartition stream, to test
// the cut alone.
type memExchange struct {
	ex      dataflow.Exchange
	maxP    int
	writers int

	mu    sync.Mutex
	parts [][][]byte // committed encoded records, per partition
	ended int
	// seen holds, per partition, every key a writer routed there.
	seen []map[string]bool
}

func newMemExchange(ex dataflow.Exchange, maxP, parts int) *memExchange {
	m := &memExchange{ex: ex, maxP: maxP, writers: parts, parts: make([][][]byte, parts), seen: make([]map[string]bool, parts)}
	for i := range m.seen {
		m.seen[i] = map[string]bool{}
	}
	return m
}

func (m *memExchange) Open(ctx context.Context, subtask, parallelism int, state []byte) (dataflow.SinkWriter, error) {
	return &memWriter{m: m}, nil
}

type memWriter struct {
	m       *memExchange
	pending [][2]any // partition, encoded record
}

func (w *memWriter) Write(rec any) error {
	key := w.m.ex.Key(rec)
	p := state.SubtaskForKeyGroup(w.m.maxP, len(w.m.parts), state.KeyGroupFor(key, w.m.maxP))
	b, err := w.m.ex.Encode(nil, rec)
	if err != nil {
		return err
	}
	w.m.mu.Lock()
	w.m.seen[p][string(key)] = true
	w.m.mu.Unlock()
	w.pending = append(w.pending, [2]any{p, b})
	return nil
}

func (w *memWriter) PreCommit(int64) ([]byte, error) { return nil, nil }
func (w *memWriter) Commit(int64) error {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	for _, r := range w.pending {
		p := r[0].(int)
		w.m.parts[p] = append(w.m.parts[p], r[1].([]byte))
	}
	w.pending = nil
	return nil
}
func (w *memWriter) Aborted(int64) error { return nil }
func (w *memWriter) Close() error        { return nil }
func (w *memWriter) Flush() error {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.m.ended++
	return nil
}

func (m *memExchange) source(p int) dataflow.Source { return memSource{m, p} }

type memSource struct {
	m *memExchange
	p int
}

func (s memSource) Open(ctx context.Context, subtask, parallelism int, pos []byte) (dataflow.SourceReader, error) {
	return &memReader{s: s}, nil
}

type memReader struct {
	s    memSource
	next int
}

func (r *memReader) Read(ctx context.Context, max int, emit func(any)) error {
	m := r.s.m
	m.mu.Lock()
	log, ended := m.parts[r.s.p], m.ended == m.writers
	m.mu.Unlock()
	if r.next == len(log) {
		if ended {
			return io.EOF
		}
		time.Sleep(time.Millisecond) // a test reader polls its log
		return nil
	}
	for ; r.next < len(log) && max > 0; r.next, max = r.next+1, max-1 {
		rec, err := m.ex.Decode(log[r.next])
		if err != nil {
			return err
		}
		emit(rec)
	}
	return nil
}
func (r *memReader) Position() ([]byte, error) { return []byte(fmt.Sprint(r.next)), nil }
func (r *memReader) Close() error              { return nil }

// TestCutWordCountRunsAsTasks cuts the word count at its KeyBy and runs its 2×P tasks as
// jobs of their own, joined by an exchange in memory: the committed output is exact, and
// every key reaches only the task whose key groups hold it.
func TestCutWordCountRunsAsTasks(t *testing.T) {
	const parts = 3
	dir := t.TempDir()
	input, output := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out")
	if err := wordcheck.WriteText(input, 256<<10, 2000, 7); err != nil {
		t.Fatal(err)
	}
	expected, err := wordcheck.Expected(input)
	if err != nil {
		t.Fatal(err)
	}
	job, err := jobs.WordCount(jobs.Spec{Name: "wc", Parallelism: parts, MaxParallelism: 128, Input: input, Output: output, BatchSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	topo, err := job.Cut()
	if err != nil {
		t.Fatal(err)
	}
	if topo.SubTopologies() != 2 || topo.Head(0) != "source" || topo.Head(1) != "count" {
		t.Fatalf("the word count cut into %d sub-topologies headed %q, %q; want 2: source, count", topo.SubTopologies(), topo.Head(0), topo.Head(1))
	}
	ex := newMemExchange(topo.Exchange(1), job.MaxParallelism, parts)
	ctx := context.Background()
	backend := hashmap.New()
	storage := jmstorage.New()
	for _, p := range []sdk.Plugin{backend, storage} {
		if err := p.Configure(ctx, sdk.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*parts)
	for k := range 2 {
		for p := range parts {
			name := fmt.Sprintf("wc.%s-%d", topo.Head(k), p)
			task := topo.Task(name, k, p, ex.source(p), ex)
			access, err := storage.CreateCheckpointStorage(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if err := access.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
				t.Fatal(err)
			}
			env := dataflow.Env{Backend: backend, BackendName: "hashmap", Checkpoints: checkpoint.NewStore(access, 1),
				Interval: 20 * time.Millisecond, Timeout: time.Minute}
			wg.Go(func() {
				if err := dataflow.Run(ctx, task, env); err != nil {
					errs <- fmt.Errorf("task %s: %w", name, err)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := wordcheck.Check(expected, output); err != nil {
		t.Fatal(err)
	}
	for p, keys := range ex.seen {
		kgs := state.KeyGroupRangeFor(job.MaxParallelism, parts, p)
		for k := range keys {
			if g := state.KeyGroupFor([]byte(k), job.MaxParallelism); !kgs.Contains(g) {
				t.Fatalf("key %q (key group %d) reached partition %d, whose key groups are %s", k, g, p, kgs)
			}
		}
	}
}

// TestCutRefusesWhatCannotCrossMachines: an exchange of records without an encoding, and
// an operator named like an exchange's reader, are refused by name.
func TestCutRefusesWhatCannotCrossMachines(t *testing.T) {
	type point struct{ x int }
	j := dataflow.NewJob("j")
	src := dataflow.FromSource[point](j, "source", nosource{})
	ks := dataflow.KeyBy(src, func(p point) []byte { return []byte{byte(p.x)} })
	dataflow.SinkTo(dataflow.Process(ks, "exchange-1", nil, func(_ *dataflow.KeyedContext, p point, emit func(point)) error { return nil }), discard{})
	_, err := j.Cut()
	if err == nil {
		t.Fatal("a job whose exchange carries records without an encoding was cut")
	}
	for _, want := range []string{`operator "exchange-1"`, "dataflow_test.point", "WithCodec", `operator id "exchange-1"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not name %s: %v", want, err)
		}
	}
}

// TestWithCodecCarriesRecords: records of a struct type cross an exchange in the encoding
// WithCodec gives their KeyBy, and come out of it equal.
func TestWithCodecCarriesRecords(t *testing.T) {
	type point struct{ x, y int }
	j := dataflow.NewJob("j")
	src := dataflow.FromSource[point](j, "source", nosource{})
	ks := dataflow.WithCodec(dataflow.KeyBy(src, func(p point) []byte { return []byte{byte(p.x)} }),
		func(b []byte, p point) ([]byte, error) { return append(b, byte(p.x), byte(p.y)), nil },
		func(b []byte) (point, error) {
			if len(b) != 2 {
				return point{}, fmt.Errorf("a point is 2 bytes, not %d", len(b))
			}
			return point{int(b[0]), int(b[1])}, nil
		})
	dataflow.SinkTo(dataflow.Process(ks, "count", nil, func(_ *dataflow.KeyedContext, p point, emit func(point)) error { return nil }), discard{})
	top, err := j.Cut()
	if err != nil {
		t.Fatalf("a job whose exchange has a codec was refused: %v", err)
	}
	ex := top.Exchange(1)
	b, err := ex.Encode([]byte("prefix"), point{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "prefix\x03\x04" {
		t.Fatalf("encoded %q, want the prefix and the two bytes", b)
	}
	got, err := ex.Decode(b[len("prefix"):])
	if err != nil || got != (point{3, 4}) {
		t.Fatalf("decoded %v, %v; want {3 4}", got, err)
	}
}

type nosource struct{}

func (nosource) Open(context.Context, int, int, []byte) (dataflow.SourceReader, error) {
	return nil, nil
}

type discard struct{}

func (discard) Open(context.Context, int, int, []byte) (dataflow.SinkWriter, error) { return nil, nil }

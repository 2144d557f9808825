package dataflow_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// liveHeap returns the bytes of live heap objects, after collecting garbage.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// builtBytes returns what an attempt of the word count at parallelism p holds once it
// is built: its subtasks, their state stores and keyed backends, and the exchanges.
func builtBytes(t *testing.T, f *fixture, p int) uint64 {
	t.Helper()
	j := f.job(t, p)
	j.MaxParallelism = p
	before := liveHeap()
	release, err := dataflow.Build(context.Background(), j, f.env(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	after := liveHeap()
	release()
	return after - before
}

func TestAttemptMemoryGrowsLinearlyWithParallelism(t *testing.T) {
	f := newFixture(t, 1<<16, nil)
	small, large := builtBytes(t, f, 100), builtBytes(t, f, 1000)
	ratio := float64(large) / float64(small)
	t.Logf("built attempt: %d KiB at p=100, %d KiB at p=1000 (x%.1f)", small>>10, large>>10, ratio)
	// Linear growth is x10; a channel per pair of subtasks made it x74.
	if ratio > 20 {
		t.Fatalf("10 times the parallelism takes %.1f times the memory: it grows faster than linearly", ratio)
	}
	if ratio < 5 {
		t.Fatalf("10 times the parallelism takes only %.1f times the memory: the measurement is off", ratio)
	}
}

// countingSource counts the subtasks opened.
type countingSource struct {
	dataflow.Source
	opened atomic.Int64
}

func (s *countingSource) Open(ctx context.Context, i, p int, pos []byte) (dataflow.SourceReader, error) {
	s.opened.Add(1)
	return s.Source.Open(ctx, i, p, pos)
}

func TestParallelismBeyondMemoryIsRefusedUpFront(t *testing.T) {
	f := newFixture(t, 1<<16, nil)
	dataflow.SetMachineMemory(t, 64<<20)
	j := f.job(t, 32768)
	j.MaxParallelism = 32768
	src := &countingSource{}
	j.WrapSource(func(s dataflow.Source) dataflow.Source { src.Source = s; return src })
	err := dataflow.Run(context.Background(), j, f.env(nil, nil))
	if err == nil {
		t.Fatal("a job at parallelism 32768 ran with 64 MiB of memory")
	}
	t.Log(err)
	for _, want := range []string{"job.parallelism 32768", "64 MiB", "job.batch-size"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("the error does not say %q: %v", want, err)
		}
	}
	if n := src.opened.Load(); n != 0 {
		t.Fatalf("%d source subtasks were opened before the job was refused", n)
	}
	// The parallelism the error proposes runs.
	m := regexp.MustCompile(`at most (\d+)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("the error proposes no parallelism: %v", err)
	}
	p, _ := strconv.Atoi(m[1])
	if p < 1 {
		t.Fatalf("the error proposes parallelism %d", p)
	}
	j = f.job(t, p)
	j.MaxParallelism = max(p, 128)
	if err := dataflow.Run(context.Background(), j, f.env(nil, nil)); err != nil {
		t.Fatalf("at the proposed parallelism %d: %v", p, err)
	}
	if err := wordcheck.Check(f.expected, f.output); err != nil {
		t.Fatal(err)
	}
}

func TestWordCountProgressesAtParallelism1000(t *testing.T) {
	f := newFixture(t, 3_100_000, nil)
	lines := countLines(t, f.input)
	if lines < 50_000 {
		t.Fatalf("the input has %d lines, want 50000", lines)
	}
	j := f.job(t, 1000)
	j.MaxParallelism = 1000
	stats := &dataflow.RunStats{}
	env := f.env(stats, nil)
	env.Interval = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if err := dataflow.Run(ctx, j, env); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d lines (%d words) at parallelism 1000 in %s, %d checkpoints", lines, stats.Records, time.Since(start).Round(time.Millisecond), stats.Checkpoints)
	if err := wordcheck.Check(f.expected, f.output); err != nil {
		t.Fatal(err)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	n := 0
	for sc := bufio.NewScanner(fh); sc.Scan(); {
		n++
	}
	return n
}

// endless never ends its input.
type endless struct{}

type endlessReader struct{ n int }

func (endless) Open(context.Context, int, int, []byte) (dataflow.SourceReader, error) {
	return &endlessReader{}, nil
}

func (r *endlessReader) Read(_ context.Context, max int, emit func(any)) error {
	for i := 0; i < max; i++ {
		r.n++
		emit("w" + strconv.Itoa(r.n%5000))
	}
	return nil
}

func (r *endlessReader) Position() ([]byte, error) { return []byte(strconv.Itoa(r.n)), nil }
func (r *endlessReader) Close() error              { return nil }

func TestCancellationEndsAJobAtHighParallelism(t *testing.T) {
	f := newFixture(t, 1, nil)
	j := f.job(t, 1000)
	j.MaxParallelism = 1000
	j.WrapSource(func(dataflow.Source) dataflow.Source { return endless{} })
	checkpointed := make(chan struct{}, 1)
	env := f.env(nil, nil)
	env.Interval = 100 * time.Millisecond
	env.OnCheckpoint = func(*checkpoint.Completed) {
		select {
		case checkpointed <- struct{}{}:
		default:
		}
	}
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- dataflow.Run(ctx, j, env) }()
	select {
	case <-checkpointed: // the job runs: records and barriers are on their way everywhere
	case err := <-done:
		t.Fatalf("the endless job ended: %v", err)
	case <-time.After(5 * time.Minute):
		t.Fatal("no checkpoint completed in 5 minutes")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled job returned %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Minute):
		t.Fatal("the job did not end within 5 minutes of its cancellation")
	}
	// Run waited for its subtasks; the last of them leave their goroutines now.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for runtime.NumGoroutine() > before+5 {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%d goroutines after the job, %d before", runtime.NumGoroutine(), before)
		}
	}
}

func TestCancellationStopsTheBuild(t *testing.T) {
	f := newFixture(t, 1, nil)
	dataflow.SetMachineMemory(t, 1<<40)
	j := f.job(t, 10000)
	j.MaxParallelism = 10000
	src := &countingSource{}
	j.WrapSource(func(s dataflow.Source) dataflow.Source { src.Source = s; return src })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := dataflow.Run(ctx, j, f.env(nil, nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run with a cancelled context returned %v", err)
	}
	if n := src.opened.Load(); n != 0 {
		t.Fatalf("%d of 10000 source subtasks were opened after the cancellation", n)
	}
}

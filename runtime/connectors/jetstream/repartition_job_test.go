package jetstream_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/runtime/state"
	"github.com/flowstate/flowstate/sdk"
)

// share opens its Source as subtask i of n whatever the run asks for: the input of
// upstream task i of n.
type share struct {
	src  dataflow.Source
	i, n int
}

func (s share) Open(ctx context.Context, _, _ int, pos []byte) (dataflow.SourceReader, error) {
	return s.src.Open(ctx, s.i, s.n, pos)
}

// outputTask opens its Sink as subtask i of n: the output writer of downstream task i.
type outputTask struct {
	sink dataflow.Sink
	i, n int
}

func (s outputTask) Open(ctx context.Context, _, _ int, st []byte) (dataflow.SinkWriter, error) {
	return s.sink.Open(ctx, s.i, s.n, st)
}

// wordCount is a downstream task's output: "word<TAB>count" on subject counts.<word>.
type wordCount struct {
	word string
	n    int64
}

func (c wordCount) Key() string    { return c.word }
func (c wordCount) String() string { return c.word + "\t" + strconv.FormatInt(c.n, 10) }

// task is one task of the distributed word count: a single-parallelism job with its own
// backend and checkpoints.
type task struct {
	name    string
	job     func(sink dataflow.Sink) *dataflow.Job
	sink    dataflow.Sink
	backend sdk.StateBackend
	store   *checkpoint.Store
}

func newTask(t *testing.T, dir, name string, sink dataflow.Sink, job func(dataflow.Sink) *dataflow.Job) *task {
	t.Helper()
	return &task{name: name, job: job, sink: sink, backend: newBackend(t), store: newStore(t, dir, name)}
}

// run runs the task, and once more from its latest checkpoint if its sink crashes it
// (crashingSink).
func (tk *task) run(ctx context.Context) error {
	env := dataflow.Env{Backend: tk.backend, BackendName: "hashmap", Checkpoints: tk.store, Interval: 20 * time.Millisecond, Timeout: time.Minute}
	err := dataflow.Run(ctx, tk.job(tk.sink), env)
	if c, ok := tk.sink.(*crashingSink); ok {
		if !errors.Is(err, errCrash) {
			return fmt.Errorf("task %s: %v, want the injected crash", tk.name, err)
		}
		latest := tk.store.Latest()
		if latest == nil {
			return fmt.Errorf("task %s: no checkpoint before the crash", tk.name)
		}
		env.Restore = latest.Metadata
		err = dataflow.Run(ctx, tk.job(c.Sink), env)
	}
	if err != nil {
		return fmt.Errorf("task %s: %w", tk.name, err)
	}
	return nil
}

// TestDistributedWordCountThroughARepartitionStream runs the word count as Kafka Streams
// would: two upstream tasks split the text's lines into words and write them to a
// repartition stream by key group; two downstream tasks each read a partition, count its
// words and write the counts to the output stream as independent writers. Every task is a
// job of its own with its own checkpoints, and all run at once; upstream task 1 and
// downstream task 0 crash at their first commit and are restored from their latest
// checkpoint. The output holds exactly the counts of the text.
func TestDistributedWordCountThroughARepartitionStream(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := jetstream.EnsureRepartitionStream(ctx, f.conn(), "WORDCOUNT", 1); err != nil {
		t.Fatal(err)
	}
	const tasks = 2
	rp := &jetstream.Repartition{Conn: f.conn(), Stream: "WORDCOUNT", Job: "wordcount", Exchange: 1, Partitions: tasks, MaxParallelism: 16,
		Key:    func(rec any) []byte { return []byte(rec.(string)) },
		Encode: func(b []byte, rec any) ([]byte, error) { return append(b, rec.(string)...), nil },
		Decode: func(b []byte) (any, error) { return string(b), nil }}
	dir := t.TempDir()
	var all []*task
	for i := range tasks {
		var sink dataflow.Sink = rp.Sink(i)
		if i == 1 {
			sink = &crashingSink{Sink: sink}
		}
		src := share{&jetstream.Source{Conn: f.conn(), Stream: "TEXT", Bounded: true}, i, tasks}
		all = append(all, newTask(t, dir, fmt.Sprintf("up-%d", i), sink, func(sink dataflow.Sink) *dataflow.Job {
			j := dataflow.NewJob(fmt.Sprintf("up-%d", i))
			j.BatchSize = 256
			words := dataflow.FlatMap(dataflow.FromSource[string](j, "source", src), jobs.SplitWords)
			// The engine wants a keyed operator before a sink: a stateless pass-through.
			keyed := dataflow.KeyBy(words, func(w string) []byte { return []byte(w) })
			dataflow.SinkTo(dataflow.Process(keyed, "pass", nil, func(_ *dataflow.KeyedContext, w string, emit func(string)) error {
				emit(w)
				return nil
			}), sink)
			return j
		}))
	}
	counts := state.NewValue("count", state.Int64)
	for p := range tasks {
		out := &jetstream.Sink{Conn: f.conn(), Stream: "COUNTS", Subject: "counts.{key}", Job: "wordcount", BatchSize: 200, Independent: true}
		var sink dataflow.Sink = outputTask{out, p, tasks}
		if p == 0 {
			sink = &crashingSink{Sink: sink}
		}
		all = append(all, newTask(t, dir, fmt.Sprintf("down-%d", p), sink, func(sink dataflow.Sink) *dataflow.Job {
			j := dataflow.NewJob(fmt.Sprintf("down-%d", p))
			j.BatchSize, j.MaxParallelism = 256, rp.MaxParallelism
			words := dataflow.KeyBy(dataflow.FromSource[string](j, "words", rp.Source(p, tasks)), func(w string) []byte { return []byte(w) })
			dataflow.SinkTo(dataflow.Process(words, "count", []state.Descriptor{counts},
				func(kc *dataflow.KeyedContext, w string, emit func(wordCount)) error {
					n, _, err := counts.Get(kc.State())
					if err != nil {
						return err
					}
					n++
					emit(wordCount{w, n})
					return counts.Update(kc.State(), n)
				}), sink)
			return j
		}))
	}
	errs := make(chan error, len(all))
	for _, tk := range all {
		go func() { errs <- tk.run(ctx) }()
	}
	var failed error
	for range all {
		if err := <-errs; err != nil && failed == nil {
			failed = err
			cancel() // the others end too
		}
	}
	if failed != nil {
		t.Fatal(failed)
	}
	f.check(t)
}

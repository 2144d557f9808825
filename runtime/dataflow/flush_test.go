package dataflow_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
)

// laterSink is a sink whose writers' Commit only records the checkpoint asked for; Flush
// does the commit, as a writer that commits in the background finishes it.
type laterSink struct {
	dataflow.Sink
	fail error // returned by Flush instead of committing
}

func (s laterSink) Open(ctx context.Context, subtask, p int, state []byte) (dataflow.SinkWriter, error) {
	w, err := s.Sink.Open(ctx, subtask, p, state)
	return &laterWriter{SinkWriter: w, fail: s.fail}, err
}

type laterWriter struct {
	dataflow.SinkWriter
	fail  error
	asked int64
}

func (w *laterWriter) Commit(id int64) error { w.asked = id; return nil }

func (w *laterWriter) Flush() error {
	if w.fail != nil {
		return w.fail
	}
	return w.SinkWriter.Commit(w.asked)
}

// TestAFlusherSinkFinishesOnceFlushed: the run flushes a Flusher sink when its input has
// ended, so a job whose sink commits in the background finishes with its whole output
// visible, and a commit that fails in the background fails the job.
func TestAFlusherSinkFinishesOnceFlushed(t *testing.T) {
	f := newFixture(t, 256<<10, nil)
	run := func(fail error) error {
		j, err := jobs.WordCount(jobs.Spec{Name: "wordcount", Parallelism: 2,
			Source: connectors.TextFiles{Path: f.input}, Sink: laterSink{connectors.FileSink{Dir: f.output}, fail}})
		if err != nil {
			t.Fatal(err)
		}
		return dataflow.Run(context.Background(), j, f.env(nil, nil))
	}
	if err := run(nil); err != nil {
		t.Fatal(err)
	}
	if err := wordcheck.Check(f.expected, f.output); err != nil {
		t.Fatalf("output once the run returned: %v", err)
	}
	f = newFixture(t, 256<<10, nil)
	err := run(errors.New("the server refused the last batch"))
	if err == nil || !strings.Contains(err.Error(), "the server refused the last batch") || !strings.Contains(err.Error(), "finish the commit") {
		t.Fatalf("run whose last commit fails: %v, want that failure", err)
	}
}

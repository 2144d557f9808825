package dataflow_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/runtime/monitor"
	"github.com/flowstate/flowstate/runtime/restart"
)

// measuredSource is a source whose readers measure themselves: each reports its subtask
// as the pending records of split "s<subtask>".
type measuredSource struct{ dataflow.Source }

func (s measuredSource) Open(ctx context.Context, subtask, p int, pos []byte) (dataflow.SourceReader, error) {
	r, err := s.Source.Open(ctx, subtask, p, pos)
	return &measuredReader{SourceReader: r, subtask: subtask}, err
}

type measuredReader struct {
	dataflow.SourceReader
	subtask int
}

func (r *measuredReader) Measure(ev dataflow.ConnectorEvents) {
	ev.SplitPending(fmt.Sprintf("s%d", r.subtask), int64(100+r.subtask))
}

// measuredSink is a sink whose writers report one commit of subtask+1 records.
type measuredSink struct{ dataflow.Sink }

func (s measuredSink) Open(ctx context.Context, subtask, p int, state []byte) (dataflow.SinkWriter, error) {
	w, err := s.Sink.Open(ctx, subtask, p, state)
	return &measuredWriter{SinkWriter: w, subtask: subtask}, err
}

type measuredWriter struct {
	dataflow.SinkWriter
	subtask int
}

func (w *measuredWriter) Measure(ev dataflow.ConnectorEvents) {
	ev.Committed(w.subtask+1, 1, time.Millisecond)
}

// TestMeasuredConnectorsReportToTheirSubtask: a run hands every source reader and sink
// writer that is Measured the ConnectorEvents of its own subtask, so what they report
// reaches the monitor under their operator and subtask.
func TestMeasuredConnectorsReportToTheirSubtask(t *testing.T) {
	f := newFixture(t, 64<<10, nil)
	j, err := jobs.WordCount(jobs.Spec{Name: "wordcount", Parallelism: 2,
		Source: measuredSource{connectors.TextFiles{Path: f.input}}, Sink: measuredSink{connectors.FileSink{Dir: f.output}}})
	if err != nil {
		t.Fatal(err)
	}
	m := monitor.New("wordcount", monitor.Options{})
	env := f.env(nil, nil)
	env.Events = m.Events()
	if err := dataflow.Run(context.Background(), j, env); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range m.Details().Vertices {
		for _, s := range v.Subtasks {
			if c := s.Connector; c != nil {
				desc := ""
				for _, sp := range c.Splits {
					desc += fmt.Sprintf("%s=%d ", sp.Split, sp.PendingRecords)
				}
				if c.Commits != nil {
					desc += fmt.Sprintf("committed=%d ", c.Commits.Records)
				}
				got[fmt.Sprintf("%s/%d", v.ID, s.Subtask)] = desc
			}
		}
	}
	want := map[string]string{"source/0": "s0=100 ", "source/1": "s1=101 ", dataflow.SinkID + "/0": "committed=1 ", dataflow.SinkID + "/1": "committed=2 "}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the connectors reported %v, want %v", got, want)
	}
}

// TestJobWithoutKeyByFailsForGood: a job whose source writes straight into its sink can
// never run, so its error is permanent and the restart strategy does not retry it.
func TestJobWithoutKeyByFailsForGood(t *testing.T) {
	f := newFixture(t, 1<<10, nil)
	j := dataflow.NewJob("nokey")
	dataflow.SinkTo(dataflow.FromSource[string](j, "source", connectors.TextFiles{Path: f.input}), connectors.Discard{})
	err := dataflow.Run(context.Background(), j, f.env(nil, nil))
	if err == nil || !strings.Contains(err.Error(), "KeyBy") || !restart.IsPermanent(err) {
		t.Fatalf("run of a job without KeyBy: %v (permanent: %v), want a permanent error naming KeyBy", err, restart.IsPermanent(err))
	}
}

package connectors

import (
	"context"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// Discard is a sink that drops every record; benchmarks use it.
type Discard struct{}

// Open implements dataflow.Sink.
func (Discard) Open(context.Context, int, int, []byte) (dataflow.SinkWriter, error) {
	return discardWriter{}, nil
}

type discardWriter struct{}

func (discardWriter) Write(any) error                 { return nil }
func (discardWriter) PreCommit(int64) ([]byte, error) { return nil, nil }
func (discardWriter) Commit(int64) error              { return nil }
func (discardWriter) Aborted(int64) error             { return nil }
func (discardWriter) Close() error                    { return nil }

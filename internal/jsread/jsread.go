// Package jsread reads what a JetStream stream holds, whole and in stream order: the
// check that the example program and the tests make of a job's output stream.
//
// It imports only the NATS client (nats.go and its jetstream package). It must never
// import the NATS server, the engine or a test package, so that a program outside the
// tests (examples/jetstream/streams) can use it.
package jsread

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Message is one message a stream holds.
type Message struct {
	Subject  string
	Sequence uint64 // the stream's sequence
	Data     []byte
	Header   nats.Header
}

// fetchBatch is the most messages one fetch asks for.
const fetchBatch = 1000

// All reads every message stream holds on subjects (filters such as "out.>"; none: all of
// them), in stream order, with an ordered consumer, until none is pending. Each fetch
// waits at most wait for its first message: a fetch that gets none while messages are
// still pending fails, naming the count.
func All(ctx context.Context, js jetstream.JetStream, stream string, wait time.Duration, subjects ...string) ([]Message, error) {
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{FilterSubjects: subjects})
	if err != nil {
		return nil, fmt.Errorf("consumer of stream %s: %w", stream, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("consumer of stream %s: %w", stream, err)
	}
	pending := info.NumPending
	out := make([]Message, 0, pending)
	for pending > 0 {
		batch, err := cons.Fetch(int(min(pending, fetchBatch)), jetstream.FetchMaxWait(wait))
		if err != nil {
			return nil, fmt.Errorf("fetch from stream %s: %w", stream, err)
		}
		n := 0
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				return nil, fmt.Errorf("message on %s of stream %s: %w", m.Subject(), stream, err)
			}
			out = append(out, Message{Subject: m.Subject(), Sequence: meta.Sequence.Stream, Data: m.Data(), Header: m.Headers()})
			pending = meta.NumPending
			n++
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return nil, fmt.Errorf("fetch from stream %s: %w", stream, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("stream %s: no message within %s; %d still pending", stream, wait, pending)
		}
	}
	return out, nil
}

package connectors

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// Event is a record of the generator: a key and a value.
type Event struct {
	Key   string
	Value int64
}

// Generator emits Records events deterministically: event i has key "k<h(i) mod Keys>"
// and value i mod 100. Subtask s of p emits the events i = s, s+p, s+2p, ...; its position
// is the count it emitted, so replay after a restore produces the same events.
type Generator struct {
	Records int64
	Keys    int64
}

// Open implements dataflow.Source.
func (g Generator) Open(ctx context.Context, subtask, parallelism int, pos []byte) (dataflow.SourceReader, error) {
	if g.Keys <= 0 {
		return nil, fmt.Errorf("generator: keys %d: must be positive", g.Keys)
	}
	r := &genReader{g: g, next: int64(subtask), step: int64(parallelism)}
	if pos != nil {
		n, k := binary.Varint(pos)
		if k <= 0 {
			return nil, fmt.Errorf("generator: bad position %x", pos)
		}
		r.next = n
	}
	return r, nil
}

type genReader struct {
	g          Generator
	next, step int64
}

func (r *genReader) key(i int64) string {
	h := uint64(i) * 0x9E3779B97F4A7C15
	h ^= h >> 29
	return "k" + strconv.FormatUint(h%uint64(r.g.Keys), 10)
}

// Read implements dataflow.SourceReader.
func (r *genReader) Read(ctx context.Context, max int, emit func(any)) error {
	for n := 0; n < max; n++ {
		if r.next >= r.g.Records {
			return io.EOF
		}
		emit(Event{Key: r.key(r.next), Value: r.next % 100})
		r.next += r.step
	}
	return nil
}

// Position implements dataflow.SourceReader.
func (r *genReader) Position() ([]byte, error) { return binary.AppendVarint(nil, r.next), nil }

// Close implements dataflow.SourceReader.
func (r *genReader) Close() error { return nil }

package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/state"
)

// event is a record of the benchmark's own jobs: a key index and its sequence number.
type event struct {
	key uint64
	seq int64
}

// permSource emits records events; event i has key index (i mod keys)*stride mod keys,
// so every run of keys consecutive events visits every key exactly once; from event
// skewFrom on, when skew is set, event i's key is skew.key(i) instead. Subtask s of p
// emits events s, s+p, ...; its position is the next event, so replay is exact.
type permSource struct {
	records, keys int64
	until         time.Time // if set, the input ends at this time (timed benchmark phases)
	skew          *zipfian
	skewFrom      int64
	// drained, if set, holds the end of the input back until it reports true (the job
	// processed every record), so that the final checkpoint finds nothing queued.
	drained func() bool
}

func (s permSource) Open(ctx context.Context, subtask, parallelism int, pos []byte) (dataflow.SourceReader, error) {
	if s.keys <= 0 {
		return nil, fmt.Errorf("benchmark source: keys %d: must be positive", s.keys)
	}
	r := &permReader{s: s, next: int64(subtask), step: int64(parallelism), stride: strideFor(s.keys)}
	if pos != nil {
		n, k := binary.Varint(pos)
		if k <= 0 {
			return nil, fmt.Errorf("benchmark source: bad position %x", pos)
		}
		r.next = n
	}
	return r, nil
}

// strideFor returns a large stride coprime with n, so multiplying by it permutes [0, n).
func strideFor(n int64) int64 {
	s := int64(1_000_003) % n
	for gcd(s, n) != 1 {
		s++
	}
	return s
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

type permReader struct {
	s                  permSource
	next, step, stride int64
}

func (r *permReader) Read(ctx context.Context, max int, emit func(any)) error {
	if !r.s.until.IsZero() && time.Now().After(r.s.until) {
		return io.EOF
	}
	for n := 0; n < max; n++ {
		if r.next >= r.s.records {
			if r.s.drained != nil && !r.s.drained() {
				if n == 0 { // nothing emitted: wait a little rather than spin
					select {
					case <-ctx.Done():
					case <-time.After(time.Millisecond):
					}
				}
				return nil
			}
			return io.EOF
		}
		k := uint64((r.next % r.s.keys) * r.stride % r.s.keys)
		if r.s.skew != nil && r.next >= r.s.skewFrom {
			k = r.s.skew.key(r.next)
		}
		emit(event{key: k, seq: r.next})
		r.next += r.step
	}
	return nil
}

func (r *permReader) Position() ([]byte, error) { return binary.AppendVarint(nil, r.next), nil }
func (r *permReader) Close() error              { return nil }

// scaleJob sums a number per key over keys keys, like the aggregate job, but visits
// every key: with records == keys the state holds exactly keys entries.
func scaleJob(keys, records int64, parallelism int) *dataflow.Job {
	j := dataflow.NewJob("scale")
	j.Parallelism = parallelism
	events := dataflow.FromSource[event](j, "source", permSource{records: records, keys: keys})
	sums := state.NewReducing("sum", state.Int64, func(a, b int64) int64 { return a + b })
	keyed := dataflow.KeyBy(events, func(e event) []byte { return []byte("k" + strconv.FormatUint(e.key, 10)) })
	out := dataflow.Process(keyed, "aggregate", []state.Descriptor{sums},
		func(kc *dataflow.KeyedContext, e event, emit func(string)) error {
			_, err := sums.Add(kc.State(), e.seq%100)
			return err
		})
	dataflow.SinkTo(out, connectors.Discard{})
	return j
}

// bigStateJob keeps a value of valueSize bytes per key: records == keys fills the state;
// later records overwrite values. rate limits records per second (0: no limit); a non-zero
// until ends the input at that time.
func bigStateJob(keys, records int64, valueSize int, rate float64, until time.Time, parallelism int) *dataflow.Job {
	j := dataflow.NewJob("bigstate")
	j.Parallelism = parallelism
	j.Rate = rate
	payload := make([]byte, valueSize)
	rand.Read(payload) // incompressible, as real state often is
	events := dataflow.FromSource[event](j, "source", permSource{records: records, keys: keys, until: until})
	blob := state.NewValue("blob", state.Bytes)
	keyed := dataflow.KeyBy(events, func(e event) []byte { return binary.BigEndian.AppendUint64(nil, e.key) })
	out := dataflow.Process(keyed, "store", []state.Descriptor{blob},
		func(kc *dataflow.KeyedContext, e event, emit func(string)) error {
			return blob.Update(kc.State(), payload)
		})
	dataflow.SinkTo(out, connectors.Discard{})
	return j
}

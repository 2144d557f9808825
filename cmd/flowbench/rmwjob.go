package main

import (
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/state"
)

// blob is the value of one key of the read-modify-write job: the key it belongs to and the
// event that wrote it.
type blob struct{ key, seq uint64 }

// blobCodec encodes a blob in size bytes (at least 16): the key and the event, big-endian,
// then filler bytes the two determine, incompressible as real state often is, so that the
// state's size on disk is its size in records.
type blobCodec struct{ size int }

func (c blobCodec) Encode(dst []byte, b blob) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, b.key)
	dst = binary.BigEndian.AppendUint64(dst, b.seq)
	x := b.seq<<20 ^ b.key
	for len(dst)-start < c.size {
		x += 0x9E3779B97F4A7C15
		dst = binary.LittleEndian.AppendUint64(dst, splitmix64(x))
	}
	return dst[:start+c.size]
}

func (c blobCodec) Decode(b []byte) (blob, error) {
	if len(b) != c.size {
		return blob{}, fmt.Errorf("a value of %d bytes, want %d", len(b), c.size)
	}
	return blob{key: binary.BigEndian.Uint64(b), seq: binary.BigEndian.Uint64(b[8:])}, nil
}

// jobProbe watches a run of the read-modify-write job from inside its function.
type jobProbe struct {
	// filled says every key has a value when the run starts (it restores a filled state);
	// otherwise no key has one yet.
	filled bool
	// onFirst, if set, is called once, when the function has processed its first record.
	onFirst func()

	once    sync.Once
	first   atomic.Int64 // when the function first returned (Unix nanoseconds)
	records atomic.Int64 // records the function processed
}

// processed counts one record the function processed.
func (p *jobProbe) processed() {
	p.records.Add(1)
	if p.first.Load() == 0 {
		p.once.Do(func() {
			p.first.Store(time.Now().UnixNano())
			if p.onFirst != nil {
				p.onFirst()
			}
		})
	}
}

// firstRecord returns when the function first processed a record (zero if never).
func (p *jobProbe) firstRecord() time.Time {
	if n := p.first.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// rmwJob keeps a value of valueSize bytes (a blob) per key of src's events, parallelism 2:
// each record reads its key's value, checks that it is its key's and that it is there
// exactly when probe says the state was filled, and writes a new one. src's permutation
// part fills (or changes) every key once; its skewed part reads and writes keys as YCSB's
// workload F does.
func rmwJob(src permSource, valueSize int, probe *jobProbe) *dataflow.Job {
	j := dataflow.NewJob("rmw")
	j.Parallelism = 2
	events := dataflow.FromSource[event](j, "source", src)
	blobs := state.NewValue[blob]("blob", blobCodec{size: valueSize})
	keyed := dataflow.KeyBy(events, func(e event) []byte { return binary.BigEndian.AppendUint64(nil, e.key) })
	out := dataflow.Process(keyed, "readwrite", []state.Descriptor{blobs},
		func(kc *dataflow.KeyedContext, e event, emit func(string)) error {
			old, ok, err := blobs.Get(kc.State())
			switch {
			case err != nil:
				return fmt.Errorf("key %d: %w", e.key, err)
			case ok != probe.filled:
				return fmt.Errorf("key %d: has a value: %t, want %t (event %d)", e.key, ok, probe.filled, e.seq)
			case ok && old.key != e.key:
				return fmt.Errorf("key %d reads back the value of key %d (written by event %d)", e.key, old.key, old.seq)
			}
			if err := blobs.Update(kc.State(), blob{key: e.key, seq: uint64(e.seq)}); err != nil {
				return fmt.Errorf("key %d: %w", e.key, err)
			}
			probe.processed()
			return nil
		})
	dataflow.SinkTo(out, connectors.Discard{})
	return j
}

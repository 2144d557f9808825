package connectors

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unsafe"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// Event is a record of the generator: a key and a value.
type Event struct {
	Key   string
	Value int64
}

// Generator emits Records events deterministically: event i has key "k<h(i) mod Keys>"
// and value i mod 100, where h(i) = x xor (x >> 29) for x = i * 0x9E3779B97F4A7C15 in
// unsigned 64-bit arithmetic. Subtask s of p emits the events i = s, s+p, s+2p, ... A subtask's
// position is the list of arithmetic progressions of events it has still to emit (next
// event, stride), so replay after a restore produces the same events, and a job restored
// with another parallelism deals the progressions out again, splitting them when there
// are fewer than subtasks (Redistribute).
type Generator struct {
	Records int64
	Keys    int64
}

// progression is the events next, next+Stride, next+2*Stride, ... below Records.
type progression struct {
	Next   int64 `json:"next"`
	Stride int64 `json:"stride"`
}

// genPos is a subtask's position: the progressions it has still to emit, the one under
// way first. Positions of earlier versions are a varint of the next event, the stride
// being the parallelism.
type genPos struct {
	Progressions []progression `json:"progressions"`
}

// Open implements dataflow.Source.
func (g Generator) Open(ctx context.Context, subtask, parallelism int, pos []byte) (dataflow.SourceReader, error) {
	if g.Keys <= 0 {
		return nil, fmt.Errorf("generator: keys %d: must be positive", g.Keys)
	}
	if pos == nil {
		return &genReader{g: g, left: g.live([]progression{{Next: int64(subtask), Stride: int64(parallelism)}})}, nil
	}
	left, err := g.decode(pos, parallelism)
	if err != nil {
		return nil, err
	}
	return &genReader{g: g, left: g.live(left)}, nil
}

// decode reads a position written at parallelism.
func (g Generator) decode(pos []byte, parallelism int) ([]progression, error) {
	if len(pos) > 0 && pos[0] == '{' { // a varint of an event number never starts so
		var p genPos
		if err := json.Unmarshal(pos, &p); err != nil {
			return nil, fmt.Errorf("generator: bad position %q: %w", pos, err)
		}
		for _, pr := range p.Progressions {
			if pr.Next < 0 || pr.Stride < 1 {
				return nil, fmt.Errorf("generator: bad position %q: progression %+v", pos, pr)
			}
		}
		return p.Progressions, nil
	}
	n, k := binary.Varint(pos)
	if k <= 0 || n < 0 {
		return nil, fmt.Errorf("generator: bad position %x", pos)
	}
	return []progression{{Next: n, Stride: int64(parallelism)}}, nil
}

// live drops the progressions that have no event left.
func (g Generator) live(ps []progression) []progression {
	out := []progression{}
	for _, p := range ps {
		if p.Next < g.Records {
			out = append(out, p)
		}
	}
	return out
}

// Redistribute implements dataflow.Redistributor: the progressions every old subtask had
// left are dealt out round-robin to parallelism subtasks; when there are fewer than
// subtasks, each is first split into k interleaved ones (next+j*stride with stride
// k*stride, j < k) so every subtask gets events. An old subtask without a position had
// not begun: it has its whole progression left.
func (g Generator) Redistribute(states [][]byte, parallelism int) ([][]byte, error) {
	var all []progression
	for i, st := range states {
		left := []progression{{Next: int64(i), Stride: int64(len(states))}}
		if st != nil {
			var err error
			if left, err = g.decode(st, len(states)); err != nil {
				return nil, fmt.Errorf("subtask %d: %w", i, err)
			}
		}
		all = append(all, g.live(left)...)
	}
	if n := len(all); n > 0 && n < parallelism {
		k := int64((parallelism + n - 1) / n)
		var split []progression
		for _, p := range all {
			for j := int64(0); j < k; j++ {
				split = append(split, progression{Next: p.Next + j*p.Stride, Stride: k * p.Stride})
			}
		}
		all = g.live(split)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Next < all[j].Next })
	return dealOut(all, parallelism, func(share []progression) ([]byte, error) {
		return json.Marshal(genPos{Progressions: share})
	})
}

type genReader struct {
	g    Generator
	left []progression
	keys []byte // the buffer the next keys go to (see Read)
}

// appendKey appends the key of event i to dst.
func (r *genReader) appendKey(dst []byte, i int64) []byte {
	h := uint64(i) * 0x9E3779B97F4A7C15
	h ^= h >> 29
	return strconv.AppendUint(append(dst, 'k'), h%uint64(r.g.Keys), 10)
}

// Read implements dataflow.SourceReader. The keys of the events are strings over 16 KiB
// buffers that successive calls fill in turn, allocated once per buffer rather than once
// per event; a key is made only of bytes no later append writes (a new buffer starts when
// the longest key no longer fits).
func (r *genReader) Read(ctx context.Context, max int, emit func(any)) error {
	keys := r.keys
	defer func() { r.keys = keys }()
	for n := 0; n < max; n++ {
		if cap(keys)-len(keys) < maxKeyLen {
			keys = make([]byte, 0, 16<<10)
		}
		for len(r.left) > 0 && r.left[0].Next >= r.g.Records {
			r.left = r.left[1:]
		}
		if len(r.left) == 0 {
			return io.EOF
		}
		p := &r.left[0]
		start := len(keys)
		keys = r.appendKey(keys, p.Next)
		emit(Event{Key: unsafe.String(&keys[start], len(keys)-start), Value: p.Next % 100})
		p.Next += p.Stride
	}
	return nil
}

// maxKeyLen is the length of the longest key: "k" and a uint64.
const maxKeyLen = 1 + 20

// Position implements dataflow.SourceReader: the progressions left.
func (r *genReader) Position() ([]byte, error) {
	return json.Marshal(genPos{Progressions: append([]progression{}, r.left...)})
}

// Close implements dataflow.SourceReader.
func (r *genReader) Close() error { return nil }

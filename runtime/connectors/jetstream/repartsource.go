package jetstream

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/restart"
)

// Source returns the reader of partition (0 to Partitions less one), which the engine
// opens as subtask 0 of parallelism 1 with the position of the task's own checkpoint (nil
// for a fresh start: the partition's first frame). Its input ends (io.EOF) once each of
// the writers upstream tasks (0 to writers less one) has ended (see Repartition). Its
// position is the Source's, at a message boundary, with the writers seen ending; a Read
// emits up to max records and the rest of the frame the max falls in, so it may emit more
// than max, up to a frame's records less one.
func (r *Repartition) Source(partition, writers int) dataflow.Source {
	return &repartSource{r: r, partition: partition, writers: writers}
}

type repartSource struct {
	r                  *Repartition
	partition, writers int
}

func (s *repartSource) what() string {
	return fmt.Sprintf("%s reader of partition %d", s.r.what(), s.partition)
}

func (s *repartSource) check() error {
	if err := s.r.Check(); err != nil {
		return err
	}
	switch {
	case s.r.Decode == nil:
		return fmt.Errorf("%s: a reader needs the records' decoding", s.what())
	case s.partition < 0 || s.partition >= s.r.Partitions:
		return fmt.Errorf("%s: the exchange has partitions 0 to %d", s.what(), s.r.Partitions-1)
	case s.writers < 1:
		return fmt.Errorf("%s: %d writers: a partition has at least one", s.what(), s.writers)
	}
	return nil
}

func (s *repartSource) source(unpack func(string, []byte, func(any)) (int, error)) *Source {
	return &Source{Conn: s.r.Conn, Stream: s.r.Stream, Subjects: []string{s.r.Subject(s.partition)}, Unpack: unpack, Logger: s.r.Logger}
}

// Preflight implements dataflow.Preflighter: the settings must hold and, when a server
// answers, the stream must exist and capture the partition's subject.
func (s *repartSource) Preflight(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.source(nil).Preflight(ctx)
}

// repartPosition is a partition reader's position: the Source's, and the writers that
// had ended there, each with the owner epoch of the end frame the reader read last.
type repartPosition struct {
	Exchange  int               `json:"exchange"`
	Partition int               `json:"partition"`
	Source    json.RawMessage   `json:"source"`
	Ended     map[string]uint64 `json:"ended,omitempty"`
}

// Open implements dataflow.Source.
func (s *repartSource) Open(ctx context.Context, subtask, parallelism int, pos []byte) (dataflow.SourceReader, error) {
	if err := s.check(); err != nil {
		return nil, restart.Permanent(err)
	}
	if subtask != 0 || parallelism != 1 {
		return nil, restart.Permanent(fmt.Errorf("%s: opened as subtask %d of %d; a partition's reader is subtask 0 of 1", s.what(), subtask, parallelism))
	}
	rr := &repartReader{s: s, ended: map[int]uint64{}, stale: map[int]uint64{}}
	var inner []byte
	if pos != nil {
		var p repartPosition
		if err := json.Unmarshal(pos, &p); err != nil || p.Source == nil {
			return nil, restart.Permanent(fmt.Errorf("%s: restore position %.200q: not a repartition reader's position (%v)", s.what(), pos, err))
		}
		if p.Exchange != s.r.Exchange || p.Partition != s.partition {
			return nil, restart.Permanent(fmt.Errorf("%s: the position being restored is of exchange %d partition %d", s.what(), p.Exchange, p.Partition))
		}
		for k, epoch := range p.Ended {
			t, err := strconv.Atoi(k)
			if err != nil || t < 0 || t >= s.writers {
				return nil, restart.Permanent(fmt.Errorf("%s: the position being restored names writer %q, the exchange has writers 0 to %d", s.what(), k, s.writers-1))
			}
			rr.ended[t] = epoch
		}
		inner = p.Source
	}
	src := s.source(rr.unpack)
	r, err := src.Open(ctx, 0, 1, inner)
	if err != nil {
		return nil, err
	}
	rr.in = r.(*reader)
	if pos != nil {
		// The Source would read on from where its position says every subject is done:
		// a position of another subject would skip this one's frames.
		for subj := range rr.in.covers {
			if subj != s.r.Subject(s.partition) {
				rr.in.Close()
				return nil, restart.Permanent(fmt.Errorf("%s: the position being restored is of subject %s, this reader's is %s", s.what(), subj, s.r.Subject(s.partition)))
			}
		}
	}
	return rr, nil
}

// repartReader is a partition's reader.
type repartReader struct {
	s  *repartSource
	in *reader
	// ended holds the writers whose last frame read is an end frame, with that frame's
	// owner epoch; stale those whose chain showed a newer run than that end frame's, with
	// the epoch found stale.
	ended, stale map[int]uint64
	recs         []any
	eof          bool
}

// unpack is the Source's Unpack: it checks a frame and emits its records, or takes an end
// frame's writer as ended.
func (rr *repartReader) unpack(_ string, data []byte, emit func(any)) (int, error) {
	r := rr.s.r
	h, body, err := readFrameHeader(data)
	switch {
	case err != nil:
		return 0, fmt.Errorf("not a repartition frame: %w", err)
	case h.partitions != r.Partitions || h.maxParallelism != r.MaxParallelism:
		return 0, fmt.Errorf("a frame of writer task %d for %d partitions of max parallelism %d, this reader's exchange has %d of %d",
			h.task, h.partitions, h.maxParallelism, r.Partitions, r.MaxParallelism)
	case h.task >= rr.s.writers:
		return 0, fmt.Errorf("a frame of writer task %d, the exchange has writers 0 to %d", h.task, rr.s.writers-1)
	case h.kind == frameEnd:
		if len(body) != 0 {
			return 0, fmt.Errorf("an end frame of writer task %d with %d bytes after its header", h.task, len(body))
		}
		rr.ended[h.task] = h.epoch
		return 0, nil
	}
	recs := rr.recs[:0]
	for len(body) > 0 {
		n, k := binary.Uvarint(body)
		if k <= 0 || n > uint64(len(body)-k) {
			return 0, fmt.Errorf("writer task %d's data frame: record %d is cut short", h.task, len(recs))
		}
		rec, err := r.Decode(body[k : k+int(n)])
		if err != nil {
			clear(recs)
			return 0, fmt.Errorf("writer task %d's data frame: record %d: %w", h.task, len(recs), err)
		}
		recs = append(recs, rec)
		body = body[k+int(n):]
	}
	if len(recs) == 0 {
		return 0, fmt.Errorf("writer task %d's data frame holds no record", h.task)
	}
	delete(rr.ended, h.task)
	for _, rec := range recs {
		emit(rec)
	}
	clear(recs)
	rr.recs = recs[:0]
	return len(recs), nil
}

// Read implements dataflow.SourceReader.
func (rr *repartReader) Read(ctx context.Context, max int, emit func(any)) error {
	if rr.eof {
		return io.EOF
	}
	if err := rr.in.Read(ctx, max, emit); err != nil {
		return err
	}
	done, err := rr.allEnded(ctx)
	if err != nil {
		return err
	}
	if done {
		rr.eof = true
		return io.EOF
	}
	return nil
}

// allEnded reports whether every writer has ended: the last frame read from each is an end
// frame, and its chain shows no run after the one that published it.
func (rr *repartReader) allEnded(ctx context.Context) (bool, error) {
	if len(rr.ended) < rr.s.writers {
		return false, nil
	}
	for t, epoch := range rr.ended {
		if e, ok := rr.stale[t]; ok && e == epoch {
			return false, nil // a newer run of the writer has opened: wait for its frames
		}
	}
	inner := rr.s.r.sink()
	for t, epoch := range rr.ended {
		_, mk, err := lastMarkerOf(ctx, rr.in.st, rr.s.r.Stream, inner.MarkerSubject(t))
		if err != nil {
			return false, fmt.Errorf("%s: %w", rr.s.what(), err)
		}
		if mk != nil && mk.Owner > epoch {
			rr.stale[t] = epoch
			return false, nil
		}
	}
	return true, nil
}

// Position implements dataflow.SourceReader.
func (rr *repartReader) Position() ([]byte, error) {
	in, err := rr.in.Position()
	if err != nil {
		return nil, err
	}
	p := repartPosition{Exchange: rr.s.r.Exchange, Partition: rr.s.partition, Source: in, Ended: make(map[string]uint64, len(rr.ended))}
	for t, epoch := range rr.ended {
		p.Ended[strconv.Itoa(t)] = epoch
	}
	return json.Marshal(p)
}

// Measure implements dataflow.Measured: the Source reports its lag (in frames).
func (rr *repartReader) Measure(ev dataflow.ConnectorEvents) { rr.in.Measure(ev) }

// Close implements dataflow.SourceReader.
func (rr *repartReader) Close() error { return rr.in.Close() }

package jetstream

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/restart"
)

// Sink returns the writer of upstream task task (0 to the upstream sub-topology's task
// count less one), which the engine opens as subtask 0 of parallelism 1 with the sink state
// of the task's own checkpoint (nil for a fresh start). Its sink state is the Sink's;
// Commit, Aborted and Close are the Sink's; Flush ends the task's input (see Repartition).
// Measured, its commits count frames, not records.
func (r *Repartition) Sink(task int) dataflow.Sink { return &repartSink{r: r, task: task} }

type repartSink struct {
	r    *Repartition
	task int
}

func (s *repartSink) what() string { return fmt.Sprintf("%s writer of task %d", s.r.what(), s.task) }

func (s *repartSink) check() error {
	if err := s.r.Check(); err != nil {
		return err
	}
	switch {
	case s.r.Key == nil || s.r.Encode == nil:
		return fmt.Errorf("%s: a writer needs the key selector and the records' encoding", s.what())
	case s.task < 0:
		return fmt.Errorf("%s: tasks count from 0", s.what())
	}
	return nil
}

// Preflight implements dataflow.Preflighter: the settings must hold and, when a server
// answers, the stream must exist, allow atomic publish and capture the subjects.
func (s *repartSink) Preflight(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.r.sink().Preflight(ctx)
}

// Open implements dataflow.Sink.
func (s *repartSink) Open(ctx context.Context, subtask, parallelism int, state []byte) (dataflow.SinkWriter, error) {
	if err := s.check(); err != nil {
		return nil, restart.Permanent(err)
	}
	if subtask != 0 || parallelism != 1 {
		return nil, restart.Permanent(fmt.Errorf("%s: opened as subtask %d of %d; a task's writer is subtask 0 of 1", s.what(), subtask, parallelism))
	}
	inner, err := s.r.sink().Open(ctx, s.task, 1, state)
	if err != nil {
		return nil, err
	}
	iw := inner.(*writer)
	w := &repartWriter{r: s.r, what: s.what(), task: s.task, w: iw, frames: make([]openFrame, s.r.Partitions)}
	w.maxFrame = iw.maxPayload - headerRoom - len(s.r.Subject(s.r.Partitions-1))
	switch {
	case s.r.FrameBytes == 0:
		w.frameBytes = min(DefaultFrameBytes, w.maxFrame)
	case s.r.FrameBytes > w.maxFrame:
		iw.Close()
		return nil, restart.Permanent(fmt.Errorf("%s: frame size %d bytes is over what the server takes: its max payload of %d bytes less %d for the subject and headers",
			s.what(), s.r.FrameBytes, iw.maxPayload, iw.maxPayload-w.maxFrame))
	default:
		w.frameBytes = s.r.FrameBytes
	}
	return w, nil
}

// repartWriter is an upstream task's writer: it packs records into a frame per partition
// and hands full frames to its Sink writer w.
type repartWriter struct {
	r                    *Repartition
	what                 string
	task                 int
	w                    *writer
	frames               []openFrame
	rec                  []byte // the record being encoded
	frameBytes, maxFrame int
	// endedAt is the chain's last sequence after the writer's last end batch (0: none):
	// a Flush with nothing published since publishes no other.
	endedAt uint64
}

// openFrame is a partition's frame being filled.
type openFrame struct {
	buf     []byte
	records int
}

// Write implements dataflow.SinkWriter.
func (w *repartWriter) Write(rec any) error {
	p := w.r.partition(w.r.Key(rec))
	var err error
	if w.rec, err = w.r.Encode(w.rec[:0], rec); err != nil {
		return fmt.Errorf("%s: encode record %T: %w", w.what, rec, err)
	}
	need := uvarintLen(uint64(len(w.rec))) + len(w.rec)
	f := &w.frames[p]
	if f.records > 0 && len(f.buf)+need > w.frameBytes {
		if err := w.send(p); err != nil {
			return err
		}
	}
	if f.records == 0 {
		f.buf = appendFrameHeader(f.buf[:0], w.header(frameData))
		if len(f.buf)+need > w.maxFrame {
			return restart.Permanent(fmt.Errorf("%s: a record of %d bytes (encoded) for partition %d does not fit a message: the server's max payload is %d bytes",
				w.what, len(w.rec), p, w.w.maxPayload))
		}
	}
	f.buf = binary.AppendUvarint(f.buf, uint64(len(w.rec)))
	f.buf = append(f.buf, w.rec...)
	f.records++
	return nil
}

func (w *repartWriter) header(kind byte) frameHeader {
	return frameHeader{kind: kind, task: w.task, epoch: w.w.own.epoch, partitions: w.r.Partitions, maxParallelism: w.r.MaxParallelism}
}

func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// send hands partition p's frame to the Sink writer, which copies it.
func (w *repartWriter) send(p int) error {
	f := &w.frames[p]
	err := w.w.Write(frameMsg{partition: p, data: f.buf})
	f.buf, f.records = f.buf[:0], 0
	return err
}

// PreCommit implements dataflow.SinkWriter: every open frame goes into the transaction of
// checkpoint id first.
func (w *repartWriter) PreCommit(id int64) ([]byte, error) {
	for p := range w.frames {
		if w.frames[p].records > 0 {
			if err := w.send(p); err != nil {
				return nil, err
			}
		}
	}
	return w.w.PreCommit(id)
}

// Commit implements dataflow.SinkWriter.
func (w *repartWriter) Commit(id int64) error { return w.w.Commit(id) }

// Aborted implements dataflow.SinkWriter.
func (w *repartWriter) Aborted(id int64) error { return w.w.Aborted(id) }

// Close implements dataflow.SinkWriter.
func (w *repartWriter) Close() error { return w.w.Close() }

// Measure implements dataflow.Measured: the Sink writer reports its commits (of frames).
func (w *repartWriter) Measure(ev dataflow.ConnectorEvents) { w.w.Measure(ev) }

// Flush implements dataflow.Flusher, which the run calls when the task's input has ended,
// after its last Commit: it waits for the commits, then publishes an end frame on every
// partition, fenced on the writer's chain. A writer that still holds records no commit
// published fails: its input has not ended.
func (w *repartWriter) Flush() error {
	if err := w.w.Flush(); err != nil {
		return err
	}
	w.w.mu.Lock()
	left, last := len(w.w.pending), w.w.own.last
	if w.w.cur != nil {
		left += w.w.cur.Records
	}
	w.w.mu.Unlock()
	for _, f := range w.frames {
		left += f.records
	}
	if left > 0 {
		return fmt.Errorf("%s: the end of input was asked for with records or transactions no commit published yet: end a task's input after its last checkpoint is committed", w.what)
	}
	if w.endedAt != 0 && w.endedAt == last {
		return nil
	}
	end := appendFrameHeader(nil, w.header(frameEnd))
	msgs := make([]*nats.Msg, w.r.Partitions)
	for p := range msgs {
		msgs[p] = nats.NewMsg(w.r.Subject(p))
		msgs[p].Data = end
	}
	if err := w.w.publishEnd(context.Background(), msgs); err != nil {
		return err
	}
	w.w.mu.Lock()
	w.endedAt = w.w.own.last
	w.w.mu.Unlock()
	return nil
}

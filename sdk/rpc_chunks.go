package sdk

import (
	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// perItemOverhead approximates the bytes protobuf adds around each item of a batch.
const perItemOverhead = 8

// batchEnd returns n > 0 such that items[:n] weigh about wire.BatchBytes at most (always
// at least one item), where size gives an item's payload.
func batchEnd[T any](items []T, size func(T) int) int {
	total := 0
	for i, it := range items {
		total += size(it) + perItemOverhead
		if i > 0 && total > wire.BatchBytes {
			return i
		}
	}
	return len(items)
}

// chunkWriter cuts what is written into chunks of wire.ChunkSize for send. send must not
// keep the slice it gets.
type chunkWriter struct {
	buf  []byte
	send func([]byte) error
}

// Write buffers p and sends every full chunk.
func (w *chunkWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if len(w.buf) == 0 && len(p) >= wire.ChunkSize {
			if err := w.send(p[:wire.ChunkSize]); err != nil {
				return written, err
			}
			p = p[wire.ChunkSize:]
			written += wire.ChunkSize
			continue
		}
		if w.buf == nil {
			w.buf = make([]byte, 0, wire.ChunkSize)
		}
		k := min(wire.ChunkSize-len(w.buf), len(p))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		written += k
		if len(w.buf) == wire.ChunkSize {
			if err := w.flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// flush sends what is buffered.
func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.send(w.buf)
	w.buf = w.buf[:0]
	return err
}

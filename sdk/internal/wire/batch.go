package wire

// perItemOverhead approximates the bytes protobuf adds around each item of a batch.
const perItemOverhead = 8

// BatchEnd returns n > 0 such that items[:n] weigh about BatchBytes at most (always at
// least one item; 0 for none), where size gives an item's payload.
func BatchEnd[T any](items []T, size func(T) int) int {
	return BatchEndAt(items, BatchBytes, size)
}

// BatchEndAt is BatchEnd for batches of about limit bytes.
func BatchEndAt[T any](items []T, limit int, size func(T) int) int {
	total := 0
	for i, it := range items {
		total += size(it) + perItemOverhead
		if i > 0 && total > limit {
			return i
		}
	}
	return len(items)
}

// ChunkWriter cuts what is written into chunks of ChunkSize for Send. Send must not keep
// the slice it gets.
type ChunkWriter struct {
	Send func([]byte) error
	buf  []byte
}

// Write buffers p and sends every full chunk.
func (w *ChunkWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if len(w.buf) == 0 && len(p) >= ChunkSize {
			if err := w.Send(p[:ChunkSize]); err != nil {
				return written, err
			}
			p = p[ChunkSize:]
			written += ChunkSize
			continue
		}
		if w.buf == nil {
			w.buf = make([]byte, 0, ChunkSize)
		}
		k := min(ChunkSize-len(w.buf), len(p))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		written += k
		if len(w.buf) == ChunkSize {
			if err := w.Flush(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

// Flush sends what is buffered.
func (w *ChunkWriter) Flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	err := w.Send(w.buf)
	w.buf = w.buf[:0]
	return err
}

package wire

import (
	"bytes"
	"testing"
)

func TestBatchEndBoundsPayload(t *testing.T) {
	items := make([][]byte, 10)
	for i := range items {
		items[i] = make([]byte, 300<<10)
	}
	size := func(b []byte) int { return len(b) }
	if n := BatchEnd(items, size); n != 3 {
		t.Errorf("batch of 300 KiB items: %d, want 3", n)
	}
	huge := [][]byte{make([]byte, 5<<20), {1}}
	if n := BatchEnd(huge, size); n != 1 {
		t.Errorf("an item above the bound still goes alone: %d, want 1", n)
	}
	if n := BatchEnd([][]byte{}, size); n != 0 {
		t.Errorf("empty: %d", n)
	}
	if n := BatchEndAt(items, 700<<10, size); n != 2 {
		t.Errorf("batch of 300 KiB items under 700 KiB: %d, want 2", n)
	}
}

// TestChunkWriterCutsChunks: whatever the sizes written, the chunks sent are ChunkSize
// except the last, and together they are the bytes written, in order.
func TestChunkWriterCutsChunks(t *testing.T) {
	var sent [][]byte
	w := &ChunkWriter{Send: func(b []byte) error { sent = append(sent, bytes.Clone(b)); return nil }}
	var all []byte
	for i, n := range []int{10, ChunkSize - 10, 3, 2 * ChunkSize, 7} {
		p := bytes.Repeat([]byte{byte(i + 1)}, n)
		all = append(all, p...)
		if k, err := w.Write(p); k != n || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v", n, k, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for i, c := range sent[:len(sent)-1] {
		if len(c) != ChunkSize {
			t.Errorf("chunk %d of %d has %d bytes, want %d", i, len(sent), len(c), ChunkSize)
		}
	}
	if got := bytes.Join(sent, nil); !bytes.Equal(got, all) {
		t.Errorf("the chunks hold %d bytes, not the %d written in order", len(got), len(all))
	}
}

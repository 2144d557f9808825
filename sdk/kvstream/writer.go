package kvstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Writer writes a canonical stream to an io.Writer through its own buffer. It is not safe
// for concurrent use.
type Writer struct {
	w     io.Writer
	buf   []byte
	crc   uint32
	count uint64
	err   error
}

// errClosed is the sticky error of a Writer after Close.
var errClosed = errors.New("kvstream: writer is closed")

// NewWriter returns a Writer that writes a canonical stream to w, starting with the magic
// header. Nothing reaches w before the buffer fills or Close is called.
func NewWriter(w io.Writer) *Writer {
	buf := make([]byte, 0, bufferSize)
	buf = append(buf, Magic...)
	return &Writer{w: w, buf: buf}
}

// Write appends one record. A nil value is written as an empty one. key and value are not
// retained after Write returns.
func (w *Writer) Write(key, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if uint64(len(key))+uint64(len(value)) > MaxRecordSize {
		return fmt.Errorf("kvstream: record of %d+%d bytes exceeds the %d-byte limit", len(key), len(value), MaxRecordSize)
	}
	need := 2*binary.MaxVarintLen64 + len(key) + len(value)
	if len(w.buf)+need > cap(w.buf) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.buf = binary.AppendUvarint(w.buf, uint64(len(key))+1)
	w.buf = binary.AppendUvarint(w.buf, uint64(len(value)))
	if need <= cap(w.buf) {
		w.buf = append(w.buf, key...)
		w.buf = append(w.buf, value...)
	} else {
		// A record larger than the buffer goes straight to w.
		if err := w.flush(); err != nil {
			return err
		}
		if err := w.direct(key); err != nil {
			return err
		}
		if err := w.direct(value); err != nil {
			return err
		}
	}
	w.count++
	return nil
}

// Count returns the number of records written so far.
func (w *Writer) Count() uint64 { return w.count }

// Close writes the end marker (record count and checksum) and flushes the buffer. It does
// not close the underlying writer. Further calls to Write fail.
func (w *Writer) Close() error {
	if w.err != nil {
		if w.err == errClosed {
			return nil
		}
		return w.err
	}
	if len(w.buf)+1+binary.MaxVarintLen64+4 > cap(w.buf) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, 0)
	w.buf = binary.AppendUvarint(w.buf, w.count)
	w.crc = crc32.Update(w.crc, castagnoli, w.buf)
	w.buf = binary.LittleEndian.AppendUint32(w.buf, w.crc)
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = fmt.Errorf("kvstream: write end marker: %w", err)
		return w.err
	}
	w.buf = w.buf[:0]
	w.err = errClosed
	return nil
}

// flush writes the buffered bytes to w.
func (w *Writer) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	w.crc = crc32.Update(w.crc, castagnoli, w.buf)
	if _, err := w.w.Write(w.buf); err != nil {
		w.err = fmt.Errorf("kvstream: write record %d: %w", w.count, err)
		return w.err
	}
	w.buf = w.buf[:0]
	return nil
}

// direct writes p to w without buffering.
func (w *Writer) direct(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	w.crc = crc32.Update(w.crc, castagnoli, p)
	if _, err := w.w.Write(p); err != nil {
		w.err = fmt.Errorf("kvstream: write record %d: %w", w.count, err)
		return w.err
	}
	return nil
}

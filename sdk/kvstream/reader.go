package kvstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/flowstate/flowstate/sdk"
)

// Reader reads a canonical stream through its own buffer. It is not safe for concurrent
// use.
type Reader struct {
	r      io.Reader
	buf    []byte
	pos    int // next unread byte in buf
	end    int // end of the valid bytes in buf
	crcPos int // buf[crcPos:pos] is consumed but not yet in crc
	crc    uint32
	count  uint64
	big    []byte // scratch for records larger than buf
	eof    bool   // r returned io.EOF
	header bool   // the magic header was read
	err    error  // sticky
	// chunked: buf is a chunk never written again once records were returned from it (see
	// NewChunkedReader).
	chunked   bool
	chunkSize int
	ahead     chan []byte // the next chunk, being prepared (see prepare)
}

// maxEmptyReads is how many (0, nil) reads in a row the reader tolerates.
const maxEmptyReads = 100

// NewReader returns a Reader of the canonical stream in r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: r, buf: make([]byte, bufferSize)}
}

// NewChunkedReader returns a Reader that leaves records where it read them: it reads the
// stream into chunks of chunkSize bytes (at least 4 KiB; a larger record gets a chunk of
// its own; a small stream should get a chunk of its size) and never writes a chunk again
// once it returned a record from it. Next then copies nothing: the key and value it
// returns point into the chunk, stay unchanged, and keep the whole chunk in memory for as
// long as the caller keeps them. A backend that keeps most records it reads (an in-memory
// backend restoring) saves an allocation and a copy per record; one that copies them
// anyway should use NewReader and NextView. Once a chunk is full, the reader prepares the
// next one on another goroutine (see prepare), so that a large stream's new memory is
// faulted in while the chunk before is decoded.
func NewChunkedReader(r io.Reader, chunkSize int) *Reader {
	chunkSize = max(chunkSize, pageSize)
	return &Reader{r: r, buf: make([]byte, chunkSize), chunked: true, chunkSize: chunkSize}
}

// prepare starts preparing a chunk for a chunked reader whose chunk is full: a goroutine
// allocates it and writes to each of its pages, so that the page faults of new memory are
// taken on another core while this one reads into and decodes the chunk before. The
// goroutine ends once the chunk is ready, whether or not the reader takes it.
func (r *Reader) prepare() {
	if !r.chunked || r.ahead != nil || r.end < len(r.buf) {
		return
	}
	ch := make(chan []byte, 1)
	r.ahead = ch
	go func(size int) {
		b := make([]byte, size)
		for i := 0; i < len(b); i += pageSize {
			b[i] = 0
		}
		ch <- b
	}(r.chunkSize)
}

// pageSize is the smallest page size of the platforms Go runs on.
const pageSize = 4 << 10

// newChunk returns a new chunk of at least n bytes: the one prepared, if any.
func (r *Reader) newChunk(n int) []byte {
	if r.ahead == nil || n > r.chunkSize {
		return make([]byte, max(r.chunkSize, n))
	}
	b := <-r.ahead
	r.ahead = nil
	return b
}

// Next returns the next record. key and value are the caller's to keep (both share one
// allocation, or a chunk of a NewChunkedReader); value is never nil. After the end marker,
// once the checksum and record count have been verified and r holds nothing more, Next
// returns io.EOF. Malformed or truncated
// input yields an error wrapping sdk.ErrCorrupt; errors of the underlying reader are
// returned wrapped. Errors are sticky.
func (r *Reader) Next() (key, value []byte, err error) {
	k, v, err := r.next()
	if err != nil || r.chunked {
		return k, v, err
	}
	b := make([]byte, len(k)+len(v))
	copy(b, k)
	copy(b[len(k):], v)
	return b[:len(k):len(k)], b[len(k):], nil
}

// NextView is Next without the copy: key and value point into the Reader's buffers and are
// valid only until the next call to Next or NextView. Callers that copy the bytes anyway
// (into a database batch, for example) save an allocation per record.
func (r *Reader) NextView() (key, value []byte, err error) {
	return r.next()
}

// Count returns the number of records returned so far.
func (r *Reader) Count() uint64 { return r.count }

func (r *Reader) next() (key, value []byte, err error) {
	if r.err != nil {
		return nil, nil, r.err
	}
	key, value, err = r.read()
	if err != nil {
		r.err = err
		return nil, nil, err
	}
	r.count++
	return key, value, nil
}

// read decodes one record or the end marker.
func (r *Reader) read() (key, value []byte, err error) {
	if !r.header {
		if err := r.fill(len(Magic)); err != nil {
			return nil, nil, r.fail("read header", err)
		}
		if string(r.buf[:len(Magic)]) != Magic {
			return nil, nil, fmt.Errorf("kvstream: not a %s stream (bad magic header): %w", sdk.FormatCanonical, sdk.ErrCorrupt)
		}
		r.pos = len(Magic)
		r.header = true
	}
	if err := r.fill(2 * binary.MaxVarintLen64); err != nil && err != io.ErrUnexpectedEOF {
		return nil, nil, r.fail("read record header", err)
	}
	klen1, err := r.uvarint("key length")
	if err != nil {
		return nil, nil, err
	}
	if klen1 == 0 {
		return nil, nil, r.readEnd()
	}
	vlen, err := r.uvarint("value length")
	if err != nil {
		return nil, nil, err
	}
	klen := klen1 - 1
	if klen > MaxRecordSize || vlen > MaxRecordSize || klen+vlen > MaxRecordSize {
		return nil, nil, fmt.Errorf("kvstream: record %d: length %d+%d exceeds the %d-byte limit: %w", r.count, klen, vlen, MaxRecordSize, sdk.ErrCorrupt)
	}
	n := int(klen + vlen)
	if n <= len(r.buf) {
		if err := r.fill(n); err != nil {
			return nil, nil, r.fail("read record", err)
		}
		b := r.buf[r.pos : r.pos+n : r.pos+n]
		r.pos += n
		return b[:klen:klen], b[klen:], nil
	}
	b, err := r.readBig(n)
	if err != nil {
		return nil, nil, r.fail("read record", err)
	}
	return b[:klen:klen], b[klen:], nil
}

// readBig reads a record of n bytes, more than the buffer holds, into r.big (a new one
// for a chunked reader, whose records are never overwritten).
func (r *Reader) readBig(n int) ([]byte, error) {
	r.crc = crc32.Update(r.crc, castagnoli, r.buf[r.crcPos:r.end])
	if r.chunked {
		r.big = append([]byte(nil), r.buf[r.pos:r.end]...)
		r.pos, r.crcPos = r.end, r.end // the chunk's records stay where they are
	} else {
		r.big = append(r.big[:0], r.buf[r.pos:r.end]...)
		r.pos, r.end, r.crcPos = 0, 0, 0
	}
	for len(r.big) < n {
		if r.eof {
			return nil, io.ErrUnexpectedEOF
		}
		// Grow by at most 4 MiB at a time, so that a corrupt length costs memory only in
		// proportion to the bytes actually there.
		chunk := min(n-len(r.big), 4<<20)
		start := len(r.big)
		r.big = append(r.big, make([]byte, chunk)...)
		m, err := io.ReadFull(r.r, r.big[start:])
		r.crc = crc32.Update(r.crc, castagnoli, r.big[start:start+m])
		r.big = r.big[:start+m]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
	}
	return r.big, nil
}

// readEnd reads and verifies the end marker after its leading 0 byte was consumed.
func (r *Reader) readEnd() error {
	count, err := r.uvarint("record count")
	if err != nil {
		return err
	}
	r.crc = crc32.Update(r.crc, castagnoli, r.buf[r.crcPos:r.pos])
	r.crcPos = r.pos
	if err := r.fill(4); err != nil {
		return r.fail("read checksum", err)
	}
	sum := binary.LittleEndian.Uint32(r.buf[r.pos:])
	r.pos += 4
	r.crcPos = r.pos
	if sum != r.crc {
		return fmt.Errorf("kvstream: checksum mismatch (stored %08x, computed %08x): %w", sum, r.crc, sdk.ErrCorrupt)
	}
	if count != r.count {
		return fmt.Errorf("kvstream: end marker counts %d records, stream holds %d: %w", count, r.count, sdk.ErrCorrupt)
	}
	if err := r.expectEOF(); err != nil {
		return err
	}
	return io.EOF
}

// expectEOF checks that nothing follows the end marker. Reading the input to its end also
// lets a verifying reader (such as the runner's sdk.StateReader) check its checksum.
func (r *Reader) expectEOF() error {
	if r.pos < r.end {
		return fmt.Errorf("kvstream: %d unexpected bytes after the end marker: %w", r.end-r.pos, sdk.ErrCorrupt)
	}
	var scratch [64]byte // not buf: a chunked reader's records live there
	for empty := 0; !r.eof; {
		m, err := r.r.Read(scratch[:])
		if m > 0 {
			return fmt.Errorf("kvstream: unexpected bytes after the end marker: %w", sdk.ErrCorrupt)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("kvstream: read after end marker: %w", err)
		}
		if empty++; empty >= maxEmptyReads {
			return fmt.Errorf("kvstream: read after end marker: %w", io.ErrNoProgress)
		}
	}
	r.eof = true
	return nil
}

// uvarint decodes a uvarint at r.pos; the caller has filled the buffer as far as it could.
func (r *Reader) uvarint(what string) (uint64, error) {
	v, n := binary.Uvarint(r.buf[r.pos:r.end])
	if n == 0 {
		return 0, fmt.Errorf("kvstream: record %d: truncated %s: %w", r.count, what, sdk.ErrCorrupt)
	}
	if n < 0 {
		return 0, fmt.Errorf("kvstream: record %d: %s overflows 64 bits: %w", r.count, what, sdk.ErrCorrupt)
	}
	r.pos += n
	return v, nil
}

// fill makes at least n unread bytes available in buf, reading as much as fits. It returns
// io.ErrUnexpectedEOF when the input ends first.
func (r *Reader) fill(n int) error {
	if r.end-r.pos >= n {
		return nil
	}
	switch {
	case r.chunked && len(r.buf)-r.pos < n:
		// Records returned point into this chunk: go on in a new one.
		r.crc = crc32.Update(r.crc, castagnoli, r.buf[r.crcPos:r.pos])
		b := r.newChunk(n)
		r.end = copy(b, r.buf[r.pos:r.end])
		r.buf, r.pos, r.crcPos = b, 0, 0
	case !r.chunked && r.pos > 0:
		r.crc = crc32.Update(r.crc, castagnoli, r.buf[r.crcPos:r.pos])
		r.end = copy(r.buf, r.buf[r.pos:r.end])
		r.pos, r.crcPos = 0, 0
	}
	for empty := 0; r.end-r.pos < n && !r.eof; {
		m, err := r.r.Read(r.buf[r.end:])
		r.end += m
		if err == io.EOF {
			r.eof = true
			break
		}
		if err != nil {
			return err
		}
		if m > 0 {
			empty = 0
		} else if empty++; empty >= maxEmptyReads {
			return io.ErrNoProgress
		}
	}
	r.prepare()
	if r.end-r.pos < n {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// fail wraps an error met while reading: a premature end of input is corruption; other
// errors of the underlying reader keep their identity.
func (r *Reader) fail(what string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("kvstream: record %d: %s: stream truncated: %w", r.count, what, sdk.ErrCorrupt)
	}
	return fmt.Errorf("kvstream: record %d: %s: %w", r.count, what, err)
}

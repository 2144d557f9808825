package boltstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/flowstate/flowstate/sdk"
)

// outStream is a state stream being written. Full chunks are committed as they fill, each
// in a transaction of its own, so memory stays bounded whatever the state's size; the
// stream's bucket is created with its first chunk.
type outStream struct {
	loc     *location
	ref     streamRef // seq is 0 until the bucket exists
	scope   sdk.Scope
	buf     []byte
	size    int64
	chunks  uint32
	created bool
	closed  bool // by CloseAndGetHandle or Close
}

func newOutStream(loc *location, scope sdk.Scope) *outStream {
	ref := streamRef{file: loc.file, shared: scope == sdk.ScopeShared, id: loc.id}
	return &outStream{loc: loc, ref: ref, scope: scope}
}

// Write buffers p, committing every full chunk.
func (s *outStream) Write(p []byte) (int, error) {
	if s.closed {
		return 0, fmt.Errorf("write to a closed %s state stream of %s", s.scope, s.loc.ref)
	}
	s.buf = append(s.buf, p...)
	s.size += int64(len(p))
	for len(s.buf) >= chunkSize {
		if err := s.flush(s.buf[:chunkSize]); err != nil {
			return 0, err
		}
		s.buf = append(s.buf[:0], s.buf[chunkSize:]...)
	}
	return len(p), nil
}

// flush commits chunk as the stream's next chunk, creating the stream's bucket first.
func (s *outStream) flush(chunk []byte) error {
	ref := s.ref
	err := s.loc.update(func(tx *bolt.Tx) error {
		parent := ref.parent(tx)
		if parent == nil {
			return fmt.Errorf("location %s no longer exists (disposed): %w", s.loc.ref, sdk.ErrNotFound)
		}
		var b *bolt.Bucket
		if !s.created {
			seq, err := parent.NextSequence()
			if err != nil {
				return err
			}
			ref.seq = seq
			if b, err = parent.CreateBucket(ref.key()); err != nil {
				return err
			}
		} else if b = ref.bucket(tx); b == nil {
			return fmt.Errorf("state stream %s was deleted while being written: %w", ref, sdk.ErrNotFound)
		}
		return b.Put(u32(s.chunks), chunk)
	})
	if err != nil {
		return fmt.Errorf("write chunk %d of a %s state stream at %s: %w", s.chunks, s.scope, s.loc.ref, err)
	}
	s.ref, s.created = ref, true
	s.chunks++
	return nil
}

// CloseAndGetHandle commits the rest of the stream and returns its handle; a stream
// smaller than the data inline threshold that never filled a chunk is returned inline.
func (s *outStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	if s.closed {
		return sdk.StreamStateHandle{}, fmt.Errorf("CloseAndGetHandle of a closed %s state stream at %s", s.scope, s.loc.ref)
	}
	if !s.created && s.size < int64(s.loc.inline) {
		s.closed = true
		return sdk.StreamStateHandle{Inline: bytes.Clone(s.buf), Size: s.size, Scope: s.scope}, nil
	}
	if len(s.buf) > 0 || !s.created {
		if err := s.flush(s.buf); err != nil {
			s.Close()
			return sdk.StreamStateHandle{}, err
		}
	}
	s.closed, s.buf = true, nil
	return sdk.StreamStateHandle{Ref: s.ref.String(), Size: s.size, Scope: s.scope}, nil
}

// Close without CloseAndGetHandle deletes the chunks written so far.
func (s *outStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed, s.buf = true, nil
	if !s.created {
		return nil
	}
	ref := s.ref
	err := s.loc.update(func(tx *bolt.Tx) error { return deleteStream(tx, ref) })
	if err != nil {
		return fmt.Errorf("discard state stream %s: %w", ref, err)
	}
	return nil
}

// deleteStream deletes the bucket of ref; a missing one is not an error.
func deleteStream(tx *bolt.Tx, ref streamRef) error {
	parent := ref.parent(tx)
	if parent == nil {
		return nil
	}
	if err := parent.DeleteBucket(ref.key()); err != nil && !errors.Is(err, bolterrors.ErrBucketNotFound) {
		return err
	}
	return nil
}

// openStream returns a reader of the stream ref, holding its file open until Close.
func openStream(ref streamRef) (io.ReadCloser, error) {
	db, release, err := acquire(ref.file, false)
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w", ref, err)
	}
	err = db.View(func(tx *bolt.Tx) error {
		if ref.bucket(tx) == nil {
			return fmt.Errorf("state %s does not exist: %w", ref, sdk.ErrNotFound)
		}
		return nil
	})
	if err != nil {
		release()
		return nil, err
	}
	return &chunkReader{db: db, release: release, ref: ref}, nil
}

// chunkReader reads a stream chunk by chunk, one read transaction per chunk.
type chunkReader struct {
	db      *bolt.DB
	release func()
	ref     streamRef
	next    uint32
	cur     []byte
	err     error
}

// Read implements io.Reader.
func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.load()
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// load reads the next chunk, or sets io.EOF after the last one.
func (r *chunkReader) load() {
	err := r.db.View(func(tx *bolt.Tx) error {
		b := r.ref.bucket(tx)
		if b == nil {
			return fmt.Errorf("state %s was deleted while being read: %w", r.ref, sdk.ErrNotFound)
		}
		v := b.Get(u32(r.next))
		if v == nil {
			return io.EOF
		}
		r.cur = bytes.Clone(v)
		r.next++
		return nil
	})
	if err != nil {
		r.err = err
	}
}

// Close releases the file.
func (r *chunkReader) Close() error {
	r.release()
	r.err = fmt.Errorf("state %s: reader is closed", r.ref)
	return nil
}

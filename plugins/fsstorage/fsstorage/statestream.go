package fsstorage

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/flowstate/flowstate/plugins/fsstorage/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// errStreamClosed is returned by a stream used after it was closed.
var errStreamClosed = errors.New("stream already closed")

// stateStream writes one piece of state. Bytes collect in a buffer; the file is created only
// when they outgrow it, so state below the inline threshold never touches the disk.
type stateStream struct {
	fs        fsys.FS
	dir       string
	scope     sdk.Scope
	threshold int64
	// limit is the buffer's capacity: at least the inline threshold, so that state below it
	// is always still in the buffer at close.
	limit int
	buf   []byte
	file  fsys.File
	path  string
	size  int64
	// err is the first write failure; the stream is dead after it.
	err    error
	closed bool
}

var _ sdk.CheckpointStateOutputStream = (*stateStream)(nil)

func newStateStream(store fsys.FS, dir string, scope sdk.Scope, threshold int64, bufSize int) *stateStream {
	limit := bufSize
	if int64(limit) < threshold {
		limit = int(threshold)
	}
	return &stateStream{fs: store, dir: dir, scope: scope, threshold: threshold, limit: limit}
}

// Write implements io.Writer.
func (s *stateStream) Write(p []byte) (int, error) {
	if s.closed {
		return 0, errorf(errStreamClosed, nil, "write to state stream in '%s'", s.dir)
	}
	if s.err != nil {
		return 0, s.err
	}
	if len(s.buf)+len(p) <= s.limit {
		s.buf = append(s.buf, p...)
		s.size += int64(len(p))
		return len(p), nil
	}
	if err := s.flush(); err != nil {
		return 0, err
	}
	if len(p) >= s.limit {
		if _, err := s.file.Write(p); err != nil {
			return 0, s.fail(wrapf(err, "write state file '%s'", s.path))
		}
	} else {
		s.buf = append(s.buf, p...)
	}
	s.size += int64(len(p))
	return len(p), nil
}

// flush creates the file if needed and writes the buffer to it.
func (s *stateStream) flush() error {
	if s.file == nil {
		if err := s.create(); err != nil {
			return err
		}
	}
	if len(s.buf) == 0 {
		return nil
	}
	if _, err := s.file.Write(s.buf); err != nil {
		return s.fail(wrapf(err, "write state file '%s'", s.path))
	}
	s.buf = s.buf[:0]
	return nil
}

// create creates the stream's file under a random name.
func (s *stateStream) create() error {
	for attempt := 0; ; attempt++ {
		name, err := layout.RandomHex(16)
		if err != nil {
			return s.fail(wrapf(err, "state file in '%s'", s.dir))
		}
		path := filepath.Join(s.dir, name)
		f, err := s.fs.Create(path)
		if err == nil {
			s.file, s.path = f, path
			return nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 3 {
			return s.fail(wrapf(err, "create state file '%s'", path))
		}
	}
}

// fail records err, deletes the partial file and returns err.
func (s *stateStream) fail(err error) error {
	s.err = err
	s.buf = nil
	s.discard()
	return err
}

// discard closes and deletes the file, if any.
func (s *stateStream) discard() error {
	if s.file == nil {
		return nil
	}
	s.file.Close()
	s.file = nil
	if err := s.fs.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrapf(err, "remove state file '%s'", s.path)
	}
	return nil
}

// CloseAndGetHandle implements sdk.CheckpointStateOutputStream. State smaller than the
// inline threshold comes back inline; larger state is synced to its file.
func (s *stateStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	if s.closed {
		return sdk.StreamStateHandle{}, errorf(errStreamClosed, nil, "close state stream in '%s'", s.dir)
	}
	if s.err != nil {
		s.closed = true
		return sdk.StreamStateHandle{}, s.err
	}
	if err := ctx.Err(); err != nil {
		s.closed = true
		return sdk.StreamStateHandle{}, s.fail(wrapf(err, "close state stream in '%s'", s.dir))
	}
	s.closed = true
	if s.file == nil && s.size < s.threshold {
		inline := s.buf
		if inline == nil {
			inline = []byte{}
		}
		s.buf = nil
		return sdk.StreamStateHandle{Inline: inline, Size: s.size, Scope: s.scope}, nil
	}
	if err := s.flush(); err != nil {
		return sdk.StreamStateHandle{}, err
	}
	s.buf = nil
	if err := s.file.Sync(); err != nil {
		return sdk.StreamStateHandle{}, s.fail(wrapf(err, "sync state file '%s'", s.path))
	}
	f := s.file
	s.file = nil
	if err := f.Close(); err != nil {
		s.fs.Remove(s.path)
		return sdk.StreamStateHandle{}, wrapf(err, "close state file '%s'", s.path)
	}
	return sdk.StreamStateHandle{Ref: fileURI(s.path), Size: s.size, Scope: s.scope}, nil
}

// Close implements sdk.CheckpointStateOutputStream: without CloseAndGetHandle it deletes the
// bytes written; after it, it does nothing.
func (s *stateStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.buf = nil
	return s.discard()
}

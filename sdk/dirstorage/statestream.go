package dirstorage

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// errStreamClosed is returned by a stream used after it was closed.
var errStreamClosed = errors.New("stream already closed")

// stateStream writes one piece of state. Bytes collect in a buffer; the file is created only
// when they outgrow it, so state below the inline threshold never touches the file system.
type stateStream struct {
	s     *Storage
	dir   string
	scope sdk.Scope
	// limit is the buffer's capacity: at least the inline threshold, so that state below it
	// is always still in the buffer at close.
	limit int
	buf   []byte
	file  File
	path  string
	size  int64
	// err is the first write failure; the stream is dead after it.
	err    error
	closed bool
	// onCreate, if set, is told the name of the stream's file once it is created.
	onCreate func(name string)
}

var _ sdk.CheckpointStateOutputStream = (*stateStream)(nil)

func newStateStream(s *Storage, dir string, scope sdk.Scope) *stateStream {
	limit := s.cfg.WriteBufferSize
	if int64(limit) < s.cfg.InlineThreshold {
		limit = int(s.cfg.InlineThreshold)
	}
	return &stateStream{s: s, dir: dir, scope: scope, limit: limit}
}

// Write implements io.Writer.
func (st *stateStream) Write(p []byte) (int, error) {
	if st.closed {
		return 0, st.s.errs.New(errStreamClosed, "write to state stream in '%s'", st.dir)
	}
	if st.err != nil {
		return 0, st.err
	}
	if len(st.buf)+len(p) <= st.limit {
		st.buf = append(st.buf, p...)
		st.size += int64(len(p))
		return len(p), nil
	}
	if err := st.flush(); err != nil {
		return 0, err
	}
	if len(p) >= st.limit {
		if _, err := st.file.Write(p); err != nil {
			return 0, st.fail(st.s.errs.Wrap(err, "write state file '%s'", st.path))
		}
	} else {
		st.buf = append(st.buf, p...)
	}
	st.size += int64(len(p))
	return len(p), nil
}

// flush creates the file if needed and writes the buffer to it.
func (st *stateStream) flush() error {
	if st.file == nil {
		if err := st.create(); err != nil {
			return err
		}
	}
	if len(st.buf) == 0 {
		return nil
	}
	if _, err := st.file.Write(st.buf); err != nil {
		return st.fail(st.s.errs.Wrap(err, "write state file '%s'", st.path))
	}
	st.buf = st.buf[:0]
	return nil
}

// create creates the stream's file under a random name.
func (st *stateStream) create() error {
	f, path, err := st.s.createStateFile(st.dir)
	if err != nil {
		return st.fail(err)
	}
	st.file, st.path = f, path
	if st.onCreate != nil {
		st.onCreate(path)
	}
	return nil
}

// stateFileNameLen is the length of a state file's name: 32 random hex digits.
const stateFileNameLen = 32

// createStateFile creates a state file under a random name in dir.
func (s *Storage) createStateFile(dir string) (File, string, error) {
	for attempt := 0; ; attempt++ {
		name, err := layout.RandomHex(stateFileNameLen / 2)
		if err != nil {
			return nil, "", s.errs.Wrap(err, "state file in '%s'", dir)
		}
		path := filepath.Join(dir, name)
		f, err := s.fs.Create(path)
		if err == nil {
			return f, path, nil
		}
		if !errors.Is(err, fs.ErrExist) || attempt == 3 {
			return nil, "", s.errs.Wrap(err, "create state file '%s'", path)
		}
	}
}

// fail records err, deletes the partial file and returns err.
func (st *stateStream) fail(err error) error {
	st.err = err
	st.buf = nil
	st.discard()
	return err
}

// discard closes and deletes the file, if any.
func (st *stateStream) discard() error {
	if st.file == nil {
		return nil
	}
	st.file.Close()
	st.file = nil
	if err := st.s.fs.Remove(st.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return st.s.errs.Wrap(err, "remove state file '%s'", st.path)
	}
	return nil
}

// CloseAndGetHandle implements sdk.CheckpointStateOutputStream. State smaller than the
// inline threshold comes back inline; larger state is synced to its file.
func (st *stateStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	if st.closed {
		return sdk.StreamStateHandle{}, st.s.errs.New(errStreamClosed, "close state stream in '%s'", st.dir)
	}
	st.closed = true
	if st.err != nil {
		return sdk.StreamStateHandle{}, st.err
	}
	if err := ctx.Err(); err != nil {
		return sdk.StreamStateHandle{}, st.fail(st.s.errs.Wrap(err, "close state stream in '%s'", st.dir))
	}
	if st.file == nil && st.size < st.s.cfg.InlineThreshold {
		inline := st.buf
		if inline == nil {
			inline = []byte{}
		}
		st.buf = nil
		return sdk.StreamStateHandle{Inline: inline, Size: st.size, Scope: st.scope}, nil
	}
	if err := st.flush(); err != nil {
		return sdk.StreamStateHandle{}, err
	}
	st.buf = nil
	if err := st.file.Sync(); err != nil {
		return sdk.StreamStateHandle{}, st.fail(st.s.errs.Wrap(err, "sync state file '%s'", st.path))
	}
	f := st.file
	st.file = nil
	if err := f.Close(); err != nil {
		st.s.fs.Remove(st.path)
		return sdk.StreamStateHandle{}, st.s.errs.Wrap(err, "close state file '%s'", st.path)
	}
	return sdk.StreamStateHandle{Ref: st.s.ref(st.path), Size: st.size, Scope: st.scope}, nil
}

// Close implements sdk.CheckpointStateOutputStream: without CloseAndGetHandle it deletes the
// bytes written; after it, it does nothing.
func (st *stateStream) Close() error {
	if st.closed {
		return nil
	}
	st.closed = true
	st.buf = nil
	return st.discard()
}

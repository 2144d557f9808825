package jmstorage

import (
	"bytes"
	"context"
	"errors"

	"github.com/flowstate/flowstate/sdk"
)

// errStreamClosed is returned by a stream used after it was closed.
var errStreamClosed = errors.New("stream already closed")

// stateStream collects one piece of state in memory.
type stateStream struct {
	loc       *location
	scope     sdk.Scope
	max       int64
	threshold int64
	buf       bytes.Buffer
	size      int64
	err       error
	closed    bool
}

var _ sdk.CheckpointStateOutputStream = (*stateStream)(nil)

// tooLarge is Flink's error for state over the memory limit.
func tooLarge(size, maxSize int64) error {
	return errs.New(sdk.ErrStateTooLarge,
		"Size of the state is larger than the maximum permitted memory-backed state. Size=%d, maxSize=%d. Consider using a different checkpoint storage, like fsstorage (FileSystemCheckpointStorage).",
		size, maxSize)
}

// Write implements io.Writer. It fails as soon as the stream exceeds max-state-size.
func (s *stateStream) Write(p []byte) (int, error) {
	if s.closed {
		return 0, errs.New(errStreamClosed, "write to a state stream at %q", s.loc.pointer())
	}
	if s.err != nil {
		return 0, s.err
	}
	if s.size+int64(len(p)) > s.max {
		s.err = tooLarge(s.size+int64(len(p)), s.max)
		s.buf = bytes.Buffer{}
		return 0, s.err
	}
	s.buf.Write(p)
	s.size += int64(len(p))
	return len(p), nil
}

// CloseAndGetHandle implements sdk.CheckpointStateOutputStream.
func (s *stateStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	if s.closed {
		return sdk.StreamStateHandle{}, errs.New(errStreamClosed, "close a state stream at %q", s.loc.pointer())
	}
	s.closed = true
	if s.err != nil {
		return sdk.StreamStateHandle{}, s.err
	}
	if err := ctx.Err(); err != nil {
		return sdk.StreamStateHandle{}, errs.Wrap(err, "close a state stream at %q", s.loc.pointer())
	}
	data := s.buf.Bytes()
	s.buf = bytes.Buffer{}
	if data == nil {
		data = []byte{}
	}
	if cap(data)-len(data) > len(data)/4 {
		data = bytes.Clone(data) // do not keep the buffer's slack alive
	}
	if s.size < s.threshold {
		return sdk.StreamStateHandle{Inline: data, Size: s.size, Scope: s.scope}, nil
	}
	ref, err := s.loc.st.addBlob(s.loc, s.scope, data)
	if err != nil {
		return sdk.StreamStateHandle{}, err
	}
	return sdk.StreamStateHandle{Ref: ref, Size: s.size, Scope: s.scope}, nil
}

// Close implements sdk.CheckpointStateOutputStream: the bytes are dropped unless
// CloseAndGetHandle was called.
func (s *stateStream) Close() error {
	s.closed = true
	s.buf = bytes.Buffer{}
	return nil
}

// metadataStream collects a checkpoint's metadata (not subject to max-state-size).
type metadataStream struct {
	loc  *location
	buf  bytes.Buffer
	done bool
}

var _ sdk.MetadataOutputStream = (*metadataStream)(nil)

// Write implements io.Writer.
func (m *metadataStream) Write(p []byte) (int, error) {
	if m.done {
		return 0, errs.New(errStreamClosed, "write metadata at %q", m.loc.pointer())
	}
	return m.buf.Write(p)
}

// CloseAndFinalize implements sdk.MetadataOutputStream.
func (m *metadataStream) CloseAndFinalize(ctx context.Context) (sdk.CompletedCheckpointStorageLocation, error) {
	if m.done {
		return sdk.CompletedCheckpointStorageLocation{}, errs.New(errStreamClosed, "finalize metadata at %q", m.loc.pointer())
	}
	m.done = true
	if err := ctx.Err(); err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, errs.Wrap(err, "finalize metadata at %q", m.loc.pointer())
	}
	metadata := bytes.Clone(m.buf.Bytes())
	if metadata == nil {
		metadata = []byte{}
	}
	m.buf = bytes.Buffer{}
	c, err := m.loc.finalize(ctx, metadata)
	if err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, err
	}
	return c.completedLocation(), nil
}

// Close implements sdk.MetadataOutputStream: without CloseAndFinalize the metadata is
// dropped.
func (m *metadataStream) Close() error {
	m.done = true
	m.buf = bytes.Buffer{}
	return nil
}

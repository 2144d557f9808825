package hashmap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// memStreams is an in-memory sdk.CheckpointStreamFactory and sdk.StateReader, standing in
// for the runner and a checkpoint storage in tests.
type memStreams struct {
	mu    sync.Mutex
	next  int
	files map[string][]byte
	open  int // streams created and not yet closed
}

func newMemStreams() *memStreams { return &memStreams{files: map[string][]byte{}} }

func (m *memStreams) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.open++
	return &memStream{m: m, scope: scope}, nil
}

func (m *memStreams) Open(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.files[h.Ref]
	if !ok {
		return nil, fmt.Errorf("stream %q: %w", h.Ref, sdk.ErrNotFound)
	}
	if int64(len(b)) != h.Size || crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) != h.Checksum {
		return nil, fmt.Errorf("stream %q: size or checksum mismatch: %w", h.Ref, sdk.ErrCorrupt)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// replace swaps the bytes of the stream h refers to and returns the handle that verifies them.
func (m *memStreams) replace(h sdk.StreamStateHandle, b []byte) sdk.StreamStateHandle {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[h.Ref] = b
	h.Size = int64(len(b))
	h.Checksum = crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
	return h
}

func (m *memStreams) bytesOf(h sdk.StreamStateHandle) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.files[h.Ref])
}

func (m *memStreams) openStreams() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.open
}

type memStream struct {
	m      *memStreams
	scope  sdk.Scope
	buf    bytes.Buffer
	closed bool
}

func (s *memStream) Write(p []byte) (int, error) {
	if s.closed {
		return 0, errors.New("write to closed stream")
	}
	return s.buf.Write(p)
}

func (s *memStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	if s.closed {
		return sdk.StreamStateHandle{}, errors.New("stream already closed")
	}
	s.closed = true
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.m.open--
	s.m.next++
	ref := "mem://" + strconv.Itoa(s.m.next)
	b := s.buf.Bytes()
	s.m.files[ref] = b
	return sdk.StreamStateHandle{Ref: ref, Size: int64(len(b)), Scope: s.scope, Checksum: crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))}, nil
}

func (s *memStream) Close() error {
	if !s.closed {
		s.closed = true
		s.m.mu.Lock()
		s.m.open--
		s.m.mu.Unlock()
	}
	return nil
}

package sdktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// MemoryStreams keeps snapshot streams in memory. It is both the sdk.CheckpointStreamFactory a
// test hands to Snapshot.Write and the sdk.StateReader it hands to Restore, playing the
// runner's part: handles it returns carry the size and CRC-32C checksum of their bytes, and
// Open verifies both (an error wrapping sdk.ErrCorrupt on a mismatch). It is safe for
// concurrent use.
type MemoryStreams struct {
	mu      sync.Mutex
	next    int
	blobs   map[string][]byte
	created []sdk.Scope
	open    int
}

// NewMemoryStreams returns an empty MemoryStreams.
func NewMemoryStreams() *MemoryStreams {
	return &MemoryStreams{blobs: make(map[string][]byte)}
}

// CreateCheckpointStateOutputStream implements sdk.CheckpointStreamFactory.
func (m *MemoryStreams) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	if scope != sdk.ScopeExclusive && scope != sdk.ScopeShared {
		return nil, fmt.Errorf("memory streams: scope %d: %w", int(scope), sdk.ErrInvalidArgument)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.created = append(m.created, scope)
	m.open++
	return &memoryStream{m: m, scope: scope}, nil
}

// Open implements sdk.StateReader. Inline handles return their own bytes.
func (m *MemoryStreams) Open(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	var b []byte
	if h.Ref == "" {
		b = h.Inline
	} else {
		m.mu.Lock()
		blob, ok := m.blobs[h.Ref]
		m.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("memory streams: state handle %q: %w", h.Ref, sdk.ErrNotFound)
		}
		b = blob
	}
	return NewVerifyingReader(io.NopCloser(bytes.NewReader(b)), h), nil
}

// Put stores b as a finished stream of the given scope and returns its handle, for tests
// that build snapshots by hand (for example a canonical stream written with sdk/kvstream).
func (m *MemoryStreams) Put(scope sdk.Scope, b []byte) sdk.StreamStateHandle {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.storeLocked(scope, bytes.Clone(b))
}

// Delete removes the bytes of h; later Opens of h fail with sdk.ErrNotFound.
func (m *MemoryStreams) Delete(h sdk.StreamStateHandle) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.blobs, h.Ref)
}

// Scopes returns the scopes of every stream created so far, in creation order.
func (m *MemoryStreams) Scopes() []sdk.Scope {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]sdk.Scope(nil), m.created...)
}

// OpenStreams returns the number of streams created and neither closed nor turned into a
// handle yet. A snapshot that returned from Write should leave none.
func (m *MemoryStreams) OpenStreams() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.open
}

// Len returns the number of stored streams.
func (m *MemoryStreams) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.blobs)
}

// Size returns the number of bytes of all stored streams.
func (m *MemoryStreams) Size() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for _, b := range m.blobs {
		n += int64(len(b))
	}
	return n
}

func (m *MemoryStreams) storeLocked(scope sdk.Scope, b []byte) sdk.StreamStateHandle {
	m.next++
	ref := fmt.Sprintf("memory://%s/%d", scope, m.next)
	m.blobs[ref] = b
	return sdk.StreamStateHandle{Ref: ref, Size: int64(len(b)), Scope: scope, Checksum: Checksum(b)}
}

// errStreamClosed is returned by writes to a finished stream.
var errStreamClosed = errors.New("memory stream: write after close")

// memoryStream is one stream of MemoryStreams.
type memoryStream struct {
	m     *MemoryStreams
	scope sdk.Scope
	mu    sync.Mutex
	buf   bytes.Buffer
	done  bool
}

// Write implements io.Writer.
func (s *memoryStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return 0, errStreamClosed
	}
	return s.buf.Write(p)
}

// CloseAndGetHandle implements sdk.CheckpointStateOutputStream.
func (s *memoryStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return sdk.StreamStateHandle{}, fmt.Errorf("memory stream: CloseAndGetHandle after close: %w", sdk.ErrInvalidArgument)
	}
	s.done = true
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.m.open--
	return s.m.storeLocked(s.scope, bytes.Clone(s.buf.Bytes())), nil
}

// Close implements sdk.CheckpointStateOutputStream: without CloseAndGetHandle the bytes are
// dropped.
func (s *memoryStream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return nil
	}
	s.done = true
	s.buf = bytes.Buffer{}
	s.m.mu.Lock()
	s.m.open--
	s.m.mu.Unlock()
	return nil
}

package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"hash"
	"io"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// Checksummed wraps a stream factory so that every handle it returns carries the size and
// CRC-32C of the bytes that went through it. The runner puts it between state backends and
// the checkpoint storage. uploaded, if not nil, is told of every write's bytes as they go
// (the progress of a checkpoint's upload).
//
// When f is an sdk.LocalStateFactory, so is the factory returned: the writer of a local
// file computes its size and checksum itself, and the handle carries those.
func Checksummed(f sdk.CheckpointStreamFactory, uploaded func(n int64)) sdk.CheckpointStreamFactory {
	c := checksumFactory{f, uploaded}
	if l, ok := f.(sdk.LocalStateFactory); ok {
		return checksumLocalFactory{c, l}
	}
	return c
}

type checksumFactory struct {
	inner    sdk.CheckpointStreamFactory
	uploaded func(n int64)
}

func (f checksumFactory) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	s, err := f.inner.CreateCheckpointStateOutputStream(ctx, scope)
	if err != nil {
		return nil, err
	}
	return &checksumStream{inner: s, crc: host.NewChecksum(), uploaded: f.uploaded}, nil
}

// checksumLocalFactory is a checksumFactory whose factory creates local state files.
type checksumLocalFactory struct {
	checksumFactory
	sdk.LocalStateFactory
}

// PublishLocalStateFile implements sdk.LocalStateFactory: the handle carries size and
// checksum, as the writer of the file counted them.
func (f checksumLocalFactory) PublishLocalStateFile(ctx context.Context, path string, scope sdk.Scope, size int64, checksum uint32) (sdk.StreamStateHandle, error) {
	h, err := f.LocalStateFactory.PublishLocalStateFile(ctx, path, scope, size, checksum)
	if err != nil {
		return h, err
	}
	if h.Size != size {
		return h, fmt.Errorf("checkpoint storage returned a handle of %d bytes for a state file of %d bytes: %w", h.Size, size, sdk.ErrCorrupt)
	}
	h.Checksum = checksum
	if f.uploaded != nil && size > 0 {
		f.uploaded(size)
	}
	return h, nil
}

type checksumStream struct {
	inner    sdk.CheckpointStateOutputStream
	crc      hash.Hash32
	n        int64
	uploaded func(n int64)
}

func (s *checksumStream) Write(p []byte) (int, error) {
	n, err := s.inner.Write(p)
	s.crc.Write(p[:n])
	s.n += int64(n)
	if s.uploaded != nil && n > 0 {
		s.uploaded(int64(n))
	}
	return n, err
}

func (s *checksumStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	h, err := s.inner.CloseAndGetHandle(ctx)
	if err != nil {
		return h, err
	}
	if h.Size != s.n {
		return h, fmt.Errorf("checkpoint storage returned a handle of %d bytes for a stream of %d bytes: %w", h.Size, s.n, sdk.ErrCorrupt)
	}
	h.Checksum = s.crc.Sum32()
	return h, nil
}

func (s *checksumStream) Close() error { return s.inner.Close() }

// Reader reads state handles back from a checkpoint storage, checking size and checksum.
// It implements sdk.StateReader.
type Reader struct {
	Access sdk.CheckpointStorageAccess
}

// Open implements sdk.StateReader.
func (r Reader) Open(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	var rc io.ReadCloser
	if h.Ref == "" {
		rc = io.NopCloser(bytes.NewReader(h.Inline))
	} else {
		var err error
		rc, err = r.Access.OpenState(ctx, h)
		if err != nil {
			return nil, fmt.Errorf("open state %s: %w", h.Ref, err)
		}
	}
	return host.VerifyingReader(rc, h), nil
}

// LocalStatePath implements sdk.LocalStateLocator when the access does: a keyed backend in
// a plugin process then reads local checkpoint files itself when it restores.
func (r Reader) LocalStatePath(ctx context.Context, h sdk.StreamStateHandle) (string, error) {
	l, ok := r.Access.(sdk.LocalStateLocator)
	if !ok || h.Ref == "" {
		return "", nil
	}
	p, err := l.LocalStatePath(ctx, h)
	if err != nil {
		return "", fmt.Errorf("locate state %s: %w", h.Ref, err)
	}
	return p, nil
}

// ReadAll reads a whole handle, verified.
func (r Reader) ReadAll(ctx context.Context, h sdk.StreamStateHandle) ([]byte, error) {
	rc, err := r.Open(ctx, h)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

package sdktest

import (
	"context"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// Checksum returns the CRC-32C (Castagnoli) of b, the checksum a StreamStateHandle carries
// (host.Checksum).
func Checksum(b []byte) uint32 { return host.Checksum(b) }

// NewVerifyingReader wraps rc, the bytes of h, so that reading to the end verifies h's Size
// and, when h carries a checksum (non-zero), its CRC-32C. A mismatch is returned by the Read
// that reaches the end, or that goes past h.Size, as an error wrapping sdk.ErrCorrupt
// (host.VerifyingReader).
func NewVerifyingReader(rc io.ReadCloser, h sdk.StreamStateHandle) io.ReadCloser {
	return host.VerifyingReader(rc, h)
}

// describe names a handle in error messages.
func describe(h sdk.StreamStateHandle) string {
	if h.Ref == "" {
		return fmt.Sprintf("(inline, %d bytes)", len(h.Inline))
	}
	return fmt.Sprintf("%q", h.Ref)
}

// AccessReader returns a StateReader that opens handles through access.OpenState and verifies
// them with NewVerifyingReader, as the runner does when it restores from a checkpoint storage.
// When access is an sdk.LocalStateLocator, so is the reader, with access's answers: a backend
// restoring through it may read local files itself, as it does under the runner.
func AccessReader(access sdk.CheckpointStorageAccess) sdk.StateReader {
	if l, ok := access.(sdk.LocalStateLocator); ok {
		return locatingAccessReader{accessReader{access}, l}
	}
	return accessReader{access}
}

type accessReader struct{ access sdk.CheckpointStorageAccess }

// Open implements sdk.StateReader.
func (a accessReader) Open(ctx context.Context, h sdk.StreamStateHandle) (io.ReadCloser, error) {
	rc, err := a.access.OpenState(ctx, h)
	if err != nil {
		return nil, err
	}
	return NewVerifyingReader(rc, h), nil
}

// locatingAccessReader is the AccessReader of an access that locates local state.
type locatingAccessReader struct {
	accessReader
	sdk.LocalStateLocator
}

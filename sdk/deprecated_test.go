package sdk_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
	"github.com/flowstate/flowstate/sdk/internal/testplugins/ref"
)

// TestDeprecatedNamesStillWork: the host-only names that left package sdk keep working for
// one release as their replacements do (the stability promise of docs/plugin-authors.md).
func TestDeprecatedNamesStillWork(t *testing.T) {
	p := ref.NewPlugin()
	if got, want := sdk.KindsOf(p), host.KindsOf(p); !slices.Equal(got, want) || len(got) != 2 {
		t.Errorf("sdk.KindsOf = %v, host.KindsOf = %v; want both kinds, the same", got, want)
	}
	data := []byte("the bytes of one state stream")
	if got, want := sdk.Checksum(data), host.Checksum(data); got != want {
		t.Errorf("sdk.Checksum = %08x, host.Checksum = %08x", got, want)
	}
	h := sdk.NewChecksum()
	h.Write(data)
	if got := h.Sum32(); got != host.Checksum(data) {
		t.Errorf("sdk.NewChecksum sums to %08x, want %08x", got, host.Checksum(data))
	}
	handle := sdk.StreamStateHandle{Ref: "s", Size: int64(len(data)), Checksum: host.Checksum(data)}
	if got, err := io.ReadAll(sdk.VerifyingReader(io.NopCloser(bytes.NewReader(data)), handle)); err != nil || !bytes.Equal(got, data) {
		t.Errorf("sdk.VerifyingReader of intact bytes: %q, %v", got, err)
	}
	bad := append(bytes.Clone(data[:len(data)-1]), 'X')
	if _, err := io.ReadAll(sdk.VerifyingReader(io.NopCloser(bytes.NewReader(bad)), handle)); !errors.Is(err, sdk.ErrCorrupt) {
		t.Errorf("sdk.VerifyingReader of a changed byte: %v; want ErrCorrupt", err)
	}
}

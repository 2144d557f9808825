package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// TestMetadataDetectsEveryBitFlipAndTruncation flips every bit of an encoded metadata,
// and cuts it at every length: each damaged copy is refused with sdk.ErrCorrupt.
func TestMetadataDetectsEveryBitFlipAndTruncation(t *testing.T) {
	good, err := sampleMetadata().Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeMetadata(good); err != nil {
		t.Fatalf("intact metadata: %v", err)
	}
	for i := range good {
		for bit := 0; bit < 8; bit++ {
			bad := bytes.Clone(good)
			bad[i] ^= 1 << bit
			if _, err := DecodeMetadata(bad); !errors.Is(err, sdk.ErrCorrupt) {
				t.Fatalf("bit %d of byte %d flipped: err = %v, want sdk.ErrCorrupt", bit, i, err)
			}
		}
	}
	for n := 0; n < len(good); n++ {
		if _, err := DecodeMetadata(good[:n]); !errors.Is(err, sdk.ErrCorrupt) {
			t.Fatalf("truncated to %d of %d bytes: err = %v, want sdk.ErrCorrupt", n, len(good), err)
		}
	}
	if _, err := DecodeMetadata(append(bytes.Clone(good), 0)); !errors.Is(err, sdk.ErrCorrupt) {
		t.Fatalf("one byte appended: err = %v, want sdk.ErrCorrupt", err)
	}
}

// bytesAccess serves one state stream's bytes, whatever the handle.
type bytesAccess struct {
	sdk.CheckpointStorageAccess
	data []byte
}

func (a bytesAccess) OpenState(context.Context, sdk.StreamStateHandle) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(a.data)), nil
}

// TestReaderDetectsDamagedState reads state whose bytes were truncated, extended or
// bit-flipped against the handle the runner recorded when writing them: every read fails
// with sdk.ErrCorrupt and names the stream; Verify finds the same through the metadata.
func TestReaderDetectsDamagedState(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	h := sdk.StreamStateHandle{Ref: "file:///ck/wc/chk-7/abc", Size: int64(len(data)), Checksum: crc32.Checksum(data, castagnoli)}
	read := func(b []byte) error {
		_, err := Reader{Access: bytesAccess{data: b}}.ReadAll(context.Background(), h)
		return err
	}
	if err := read(data); err != nil {
		t.Fatalf("intact state: %v", err)
	}
	flipped := bytes.Clone(data)
	flipped[len(flipped)/2] ^= 0x10
	for name, b := range map[string][]byte{
		"truncated":   data[:len(data)-1],
		"empty":       nil,
		"extended":    append(bytes.Clone(data), 'x'),
		"bit-flipped": flipped,
	} {
		err := read(b)
		if !errors.Is(err, sdk.ErrCorrupt) || !strings.Contains(err.Error(), h.Ref) {
			t.Errorf("%s state: err = %v, want sdk.ErrCorrupt naming %s", name, err, h.Ref)
		}
	}
	m := sampleMetadata()
	m.Operators[0].Subtasks[0].Keyed[0].Files[0].Handle = h
	if err := Verify(context.Background(), bytesAccess{data: data}, m); err != nil {
		t.Fatalf("Verify of intact state: %v", err)
	}
	err := Verify(context.Background(), bytesAccess{data: flipped}, m)
	if !errors.Is(err, sdk.ErrCorrupt) || !strings.Contains(err.Error(), "operator count subtask 0") {
		t.Fatalf("Verify of flipped state: %v, want sdk.ErrCorrupt naming the operator and subtask", err)
	}
}

package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// sampleMetadata is a small but complete metadata: keyed handles inline and by reference,
// and operator state.
func sampleMetadata() *Metadata {
	return &Metadata{
		Version: MetadataVersion, JobID: "wc", CheckpointID: 7, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Backend: "hashmap", MaxParallelism: 128,
		Operators: []OperatorState{{ID: "count", Parallelism: 2, Subtasks: []SubtaskState{
			{Index: 0, Operator: []byte("offset=42"), Keyed: []sdk.KeyedStateHandle{{
				Format: "flowstate-kv-v1",
				Files: []sdk.NamedStateHandle{{Name: "part-0", Handle: sdk.StreamStateHandle{
					Ref: "file:///ck/wc/chk-7/abc", Size: 4096, Checksum: 0xdeadbeef, Scope: sdk.ScopeExclusive}}},
			}}},
			{Index: 1, Keyed: []sdk.KeyedStateHandle{{Format: "flowstate-kv-v1", Files: []sdk.NamedStateHandle{{
				Name: "part-0", Handle: sdk.StreamStateHandle{Inline: []byte("small"), Size: 5}}}}}},
		}}},
	}
}

// FuzzDecodeMetadata feeds arbitrary bytes to the metadata decoder: it must never panic,
// and what it accepts must encode and decode back to the same metadata.
func FuzzDecodeMetadata(f *testing.F) {
	good, err := sampleMetadata().Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(append([]byte(nil), metadataMagic...))
	f.Add([]byte("FLOWSTATE-METADATA\n{}\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00"))
	f.Add([]byte(`{"version":1,"operators":[{"subtasks":[{"keyed":[{"files":[{"handle":{"size":-1}}]}]}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b)
		checkDecode(t, frame(b)) // past the checksum, into the JSON body
	})
}

// frame wraps body as Encode does: magic, body, length and CRC-32C.
func frame(body []byte) []byte {
	out := append(append([]byte(nil), metadataMagic...), body...)
	out = binary.BigEndian.AppendUint64(out, uint64(len(body)))
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(body, castagnoli))
}

// checkDecode decodes b: an error must say corrupt or unsupported; accepted metadata must
// survive an encode and decode unchanged. Unchanged is judged on the encoding: JSON does not
// keep an empty byte slice apart from a missing one, and neither matters to a restore.
func checkDecode(t *testing.T, b []byte) {
	m, err := DecodeMetadata(b)
	if err != nil {
		if !errors.Is(err, sdk.ErrCorrupt) && !errors.Is(err, sdk.ErrUnsupported) {
			t.Fatalf("error is neither corrupt nor unsupported: %v", err)
		}
		return
	}
	again, err := m.Encode()
	if err != nil {
		t.Fatalf("accepted metadata does not encode: %v", err)
	}
	m2, err := DecodeMetadata(again)
	if err != nil {
		t.Fatalf("re-encoded metadata does not decode: %v", err)
	}
	again2, err := m2.Encode()
	if err != nil {
		t.Fatalf("decoded metadata does not encode: %v", err)
	}
	if !bytes.Equal(again, again2) {
		t.Fatalf("round trip changed the metadata:\n%s\n%s", again, again2)
	}
}

package state

import (
	"context"
	"testing"
)

// TestStoreCountsBoundaryBytes checks the byte counters against a hand count: state keys
// are key group (2 bytes), name length (1), name, record key.
func TestStoreCountsBoundaryBytes(t *testing.T) {
	b := &mapBackend{m: map[string][]byte{}}
	sum := NewValue("sum", Int64)
	s, err := NewStore(b, 128, []Descriptor{sum})
	s.SetCacheEntries(0) // count every value crossing
	if err != nil {
		t.Fatal(err)
	}
	keys := [][]byte{[]byte("ab"), []byte("cd"), []byte("ab")}
	const keyLen = 2 + 1 + 3 + 2
	run := func() {
		t.Helper()
		err := s.ProcessBatch(context.Background(), keys, nil, func(i int) error {
			n, _, err := sum.Get(s)
			if err != nil {
				return err
			}
			return sum.Update(s, n+100) // varint of 100..300: 2 bytes
		})
		if err == nil {
			err = s.Sync()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	run()
	st := s.Stats()
	// Get: 2 distinct keys sent, nothing returned; Write: 2 keys and 2-byte values.
	if want := int64(2*keyLen + 2*(keyLen+2)); st.BytesSent != want {
		t.Fatalf("BytesSent %d after the first batch, want %d", st.BytesSent, want)
	}
	if st.BytesReceived != 0 {
		t.Fatalf("BytesReceived %d after the first batch (no state yet), want 0", st.BytesReceived)
	}
	run()
	st = s.Stats()
	if want := int64(2 * (2*keyLen + 2*(keyLen+2))); st.BytesSent != want {
		t.Fatalf("BytesSent %d after the second batch, want %d", st.BytesSent, want)
	}
	if st.BytesReceived != 4 {
		t.Fatalf("BytesReceived %d after the second batch, want 4 (two 2-byte values)", st.BytesReceived)
	}
	var total Stats
	total.Add(st)
	total.Add(st)
	if total.BytesSent != 2*st.BytesSent || total.Records != 2*st.Records || total.GetCalls != 2*st.GetCalls {
		t.Fatalf("Add: %+v is not twice %+v", total, st)
	}
}

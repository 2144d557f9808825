package state

import (
	"bytes"
	"context"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// TestSplitStateKeyUndoesTheStore splits the keys a Store writes back into what it was
// given, and refuses keys too short for their own layout.
func TestSplitStateKeyUndoesTheStore(t *testing.T) {
	kb := &mapBackend{m: map[string][]byte{}}
	v := NewValue("visits", Int64)
	s, err := NewStore(kb, 128, []Descriptor{v})
	if err != nil {
		t.Fatal(err)
	}
	keys := [][]byte{[]byte("alice"), {}, {0, 0xff, 3}}
	err = s.ProcessBatch(context.Background(), keys, nil, func(i int) error { return v.Update(s, int64(i)) })
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	found := 0
	for k := range kb.m {
		g, name, key, err := SplitStateKey([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if name != "visits" || g != KeyGroupFor(key, 128) || g != sdk.KeyGroupOf([]byte(k)) {
			t.Fatalf("key %x split into group %d, state %q, key %x", k, g, name, key)
		}
		if !bytes.Equal(AppendStateKey(nil, g, name, key), []byte(k)) {
			t.Fatalf("AppendStateKey does not rebuild %x", k)
		}
		found++
	}
	if found != len(keys) {
		t.Fatalf("%d keys written, %d found", len(keys), found)
	}
	for _, bad := range [][]byte{nil, {0, 1}, {0, 1, 0}, {0, 1, 5, 'a', 'b'}} {
		if _, _, _, err := SplitStateKey(bad); err == nil {
			t.Errorf("SplitStateKey(%x) succeeded", bad)
		}
	}
}

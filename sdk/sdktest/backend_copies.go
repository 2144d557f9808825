package sdktest

import (
	"bytes"
	"context"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// The checks in this file hold plugins to the ownership of byte slices: slices a caller
// passes in are the caller's again once the call returns, and slices a call returns are the
// caller's to change.

// scribble overwrites b in place, as a caller reusing a buffer does.
func scribble(b []byte) {
	for i := range b {
		b[i] = 'X'
	}
}

// checkGetCopies verifies that changing the values Get returned leaves the state alone.
func checkGetCopies(t *testing.T, factory BackendFactory) {
	kb := OpenKeyed(t, factory(t), fullParams("get-copies"))
	m := make(Model)
	keys := [][]byte{StateKey(2, "a"), StateKey(2, "b"), StateKey(9, "c")}
	MustWrite(t, kb, m, []sdk.Mutation{
		{Key: keys[0], Value: []byte("original-a")},
		{Key: keys[1], Value: []byte("original-b")},
		{Key: keys[2], Value: []byte("original-c")},
	})
	for round := 0; round < 2; round++ {
		vals, err := kb.Get(context.Background(), keys)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		for i, v := range vals {
			if !bytes.Equal(v, m[string(keys[i])]) {
				t.Fatalf("round %d: Get of key %x = %s after the caller changed earlier results, want %s", round, keys[i], short(v), short(m[string(keys[i])]))
			}
			scribble(v)
		}
	}
	CheckContents(t, kb, m)
}

// checkWriteReusesBuffers verifies that Write keeps no reference to its mutations, nor to
// their keys and values: the caller reuses all of them for the next call.
func checkWriteReusesBuffers(t *testing.T, factory BackendFactory) {
	kb := OpenKeyed(t, factory(t), fullParams("write-reuse"))
	m := make(Model)
	key, val := StateKey(3, "key-0"), []byte("value-0")
	muts := []sdk.Mutation{{Key: key, Value: val}}
	MustWrite(t, kb, m, muts)
	copy(key[2:], "key-1")
	copy(val, "value-1")
	MustWrite(t, kb, m, muts)
	scribble(key[2:])
	scribble(val)
	muts[0] = sdk.Mutation{Key: StateKey(3, "key-2"), Delete: true}
	CheckContents(t, kb, m)
}

// checkScanCopies verifies that changing the keys and values Scan returned leaves the state
// alone.
func checkScanCopies(t *testing.T, sb sdk.StateBackend) {
	kb := OpenKeyed(t, sb, fullParams("scan-copies"))
	m := make(Model)
	Fill(t, kb, m, fullParams("").KeyGroups, 300, "v1")
	for round := 0; round < 2; round++ {
		kvs, err := kb.Scan(context.Background(), nil, nil, 1000)
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if d := diffKVs(kvs, m.sorted(nil, nil)); d != "" {
			t.Fatalf("round %d: Scan after the caller changed earlier results: %s", round, d)
		}
		for _, kv := range kvs {
			scribble(kv.Key[sdk.KeyGroupPrefixLen:])
			scribble(kv.Value)
		}
	}
	CheckContents(t, kb, m)
}

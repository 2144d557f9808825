package sdktest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/flowstate/flowstate/sdk"
)

// StateKey returns a state key of key group g: its 2-byte prefix followed by suffix.
func StateKey(g int, suffix string) []byte {
	return append(sdk.KeyGroupPrefix(g), suffix...)
}

// NumberedKey returns key i of key group g, as Fill writes it: the key group prefix and i
// as a big-endian uint64, so that the numbered keys of one key group sort by i.
func NumberedKey(g int, i int) []byte {
	return binary.BigEndian.AppendUint64(sdk.KeyGroupPrefix(g), uint64(i))
}

// Model is the expected content of a keyed backend: each present key, as a string, and its
// value. MustWrite and Fill keep it in step with the backend; CheckContents compares them.
type Model map[string][]byte

// Apply applies mutations in order, as KeyedStateBackend.Write promises to; a written nil
// value becomes a present empty one.
func (m Model) Apply(muts []sdk.Mutation) {
	for _, mu := range muts {
		if mu.Delete {
			delete(m, string(mu.Key))
			continue
		}
		v := bytes.Clone(mu.Value)
		if v == nil {
			v = []byte{}
		}
		m[string(mu.Key)] = v
	}
}

// Clone returns a copy of m that later changes of m do not affect.
func (m Model) Clone() Model { return maps.Clone(m) }

// Within returns the part of m in key groups r.
func (m Model) Within(r sdk.KeyGroupRange) Model {
	c := make(Model)
	for k, v := range m {
		if r.Contains(sdk.KeyGroupOf([]byte(k))) {
			c[k] = v
		}
	}
	return c
}

// sorted returns m's pairs with start <= key < end (nil end: no bound) in key order.
func (m Model) sorted(start, end []byte) []sdk.KV {
	keys := slices.Sorted(maps.Keys(m))
	kvs := make([]sdk.KV, len(keys))
	for i, k := range keys {
		kvs[i] = sdk.KV{Key: []byte(k), Value: m[k]}
	}
	return between(kvs, start, end)
}

// between returns the pairs of sorted kvs with start <= key < end (nil end: no bound).
func between(kvs []sdk.KV, start, end []byte) []sdk.KV {
	i := sort.Search(len(kvs), func(i int) bool { return bytes.Compare(kvs[i].Key, start) >= 0 })
	j := len(kvs)
	if end != nil {
		j = sort.Search(len(kvs), func(i int) bool { return bytes.Compare(kvs[i].Key, end) >= 0 })
	}
	j = max(i, j)
	return kvs[i:j:j]
}

// keysOf returns the keys of kvs.
func keysOf(kvs []sdk.KV) [][]byte {
	out := make([][]byte, len(kvs))
	for i, kv := range kvs {
		out[i] = kv.Key
	}
	return out
}

// keys returns m's keys in order.
func (m Model) keys() [][]byte { return keysOf(m.sorted(nil, nil)) }

// diffKVs describes the first difference between got and want, or returns "".
func diffKVs(got, want []sdk.KV) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if !bytes.Equal(got[i].Key, want[i].Key) {
			return fmt.Sprintf("pair %d: key %x, want key %x (got %d pairs, want %d)", i, got[i].Key, want[i].Key, len(got), len(want))
		}
		if !bytes.Equal(got[i].Value, want[i].Value) {
			return fmt.Sprintf("pair %d (key %x): value %s, want %s", i, got[i].Key, short(got[i].Value), short(want[i].Value))
		}
	}
	switch {
	case len(got) > len(want):
		return fmt.Sprintf("got %d pairs, want %d; first extra key %x", len(got), len(want), got[len(want)].Key)
	case len(got) < len(want):
		return fmt.Sprintf("got %d pairs, want %d; first missing key %x", len(got), len(want), want[len(got)].Key)
	}
	return ""
}

// short formats a value for messages, cut to a readable length.
func short(b []byte) string {
	if b == nil {
		return "nil"
	}
	if len(b) > 24 {
		return fmt.Sprintf("%x... (%d bytes)", b[:24], len(b))
	}
	return fmt.Sprintf("%x (%d bytes)", b, len(b))
}

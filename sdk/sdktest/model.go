package sdktest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// stateKey builds a state key of key group g: its 2-byte prefix followed by suffix.
func stateKey(g int, suffix string) []byte {
	return append(sdk.KeyGroupPrefix(g), suffix...)
}

// numberedKey returns key i of key group g; numbered keys of one group sort by i.
func numberedKey(g int, i int) []byte {
	return binary.BigEndian.AppendUint64(sdk.KeyGroupPrefix(g), uint64(i))
}

// model is the expected content of a keyed backend. Change it only through apply and set,
// which keep the cache of its sorted pairs right.
type model map[string][]byte

// sortedCache holds the sorted pairs of the model sorted last, so that checks that read a
// large model in order several times (every key group, then every key) sort it once. It
// keeps the model itself, so its identity cannot be reused by another map.
var sortedCache struct {
	mu  sync.Mutex
	m   model
	n   int
	kvs []sdk.KV
}

// same reports whether a and b are the same map.
func same(a, b model) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// invalidate drops the cached sorted pairs of m.
func (m model) invalidate() {
	sortedCache.mu.Lock()
	defer sortedCache.mu.Unlock()
	if same(sortedCache.m, m) {
		sortedCache.m, sortedCache.kvs = nil, nil
	}
}

// set sets key k to v.
func (m model) set(k string, v []byte) {
	m.invalidate()
	m[k] = v
}

// all returns m's pairs in key order, from the cache when m did not change since.
func (m model) all() []sdk.KV {
	sortedCache.mu.Lock()
	defer sortedCache.mu.Unlock()
	if same(sortedCache.m, m) && sortedCache.n == len(m) {
		return sortedCache.kvs
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	kvs := make([]sdk.KV, len(keys))
	for i, k := range keys {
		kvs[i] = sdk.KV{Key: []byte(k), Value: m[k]}
	}
	sortedCache.m, sortedCache.n, sortedCache.kvs = m, len(m), kvs
	return kvs
}

// apply applies mutations in order, as Write promises to.
func (m model) apply(muts []sdk.Mutation) {
	m.invalidate()
	for _, mu := range muts {
		if mu.Delete {
			delete(m, string(mu.Key))
		} else {
			m[string(mu.Key)] = bytes.Clone(mu.Value)
			if m[string(mu.Key)] == nil {
				m[string(mu.Key)] = []byte{}
			}
		}
	}
}

// clone copies m.
func (m model) clone() model {
	c := make(model, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// within returns the part of m in key groups r.
func (m model) within(r sdk.KeyGroupRange) model {
	c := make(model)
	for k, v := range m {
		if r.Contains(sdk.KeyGroupOf([]byte(k))) {
			c[k] = v
		}
	}
	return c
}

// sorted returns m's pairs with start <= key < end (nil end: no bound) in key order. The
// result shares the cache: read it, never change it.
func (m model) sorted(start, end []byte) []sdk.KV {
	return between(m.all(), start, end)
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

// keys returns m's keys in order.
func (m model) keys() [][]byte {
	kvs := m.sorted(nil, nil)
	out := make([][]byte, len(kvs))
	for i, kv := range kvs {
		out[i] = kv.Key
	}
	return out
}

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

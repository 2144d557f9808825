package leveldb

// The tests in this file are common to the built-in state backends (plugins/hashmap and
// plugins/leveldb keep identical copies); testPlugin in each package supplies the backend.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

var bg = context.Background()

// params returns the parameters of subtask i of n of operator op (128 key groups).
func params(op string, i, n int) sdk.KeyedBackendParams {
	return sdk.KeyedBackendParams{
		JobID: "job", OperatorID: op, Subtask: i, Parallelism: n, MaxParallelism: 128,
		KeyGroups: sdk.KeyGroupRange{Start: i * 128 / n, End: (i + 1) * 128 / n},
	}
}

func openKeyed(t testing.TB, sb sdk.StateBackend, p sdk.KeyedBackendParams) sdk.KeyedStateBackend {
	t.Helper()
	kb, err := sb.CreateKeyedStateBackend(bg, p)
	if err != nil {
		t.Fatalf("CreateKeyedStateBackend: %v", err)
	}
	t.Cleanup(func() {
		if err := kb.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return kb
}

// key returns a state key in key group g.
func key(g int, s string) []byte { return append(sdk.KeyGroupPrefix(g), s...) }

// model is what a keyed backend should hold.
type model map[string][]byte

func (m model) apply(muts []sdk.Mutation) {
	for _, mu := range muts {
		if mu.Delete {
			delete(m, string(mu.Key))
		} else {
			m[string(mu.Key)] = append([]byte{}, mu.Value...)
		}
	}
}

func (m model) within(r sdk.KeyGroupRange) model {
	out := model{}
	for k, v := range m {
		if r.Contains(sdk.KeyGroupOf([]byte(k))) {
			out[k] = v
		}
	}
	return out
}

func mustWrite(t testing.TB, kb sdk.KeyedStateBackend, m model, muts []sdk.Mutation) {
	t.Helper()
	if err := kb.Write(bg, muts); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if m != nil {
		m.apply(muts)
	}
}

// fill writes n keys spread over the key groups of r, in batches, with values of size vsize.
func fill(t testing.TB, kb sdk.KeyedStateBackend, m model, r sdk.KeyGroupRange, n, vsize int, tag string) {
	t.Helper()
	var muts []sdk.Mutation
	for i := range n {
		g := r.Start + i%(r.End-r.Start)
		v := bytes.Repeat([]byte{byte(i)}, vsize)
		copy(v, tag)
		muts = append(muts, sdk.Mutation{Key: key(g, fmt.Sprintf("k%07d", i)), Value: v})
		if len(muts) == 4096 || i == n-1 {
			mustWrite(t, kb, m, muts)
			muts = muts[:0]
		}
	}
}

// scanAll reads [start, end) page by page.
func scanAll(t testing.TB, kb sdk.KeyedStateBackend, start, end []byte, limit int) []sdk.KV {
	t.Helper()
	var out []sdk.KV
	for {
		page, err := kb.Scan(bg, start, end, limit)
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if len(page) == 0 {
			return out
		}
		if limit > 0 && len(page) > limit {
			t.Fatalf("Scan returned %d pairs, limit %d", len(page), limit)
		}
		out = append(out, page...)
		start = append(bytes.Clone(page[len(page)-1].Key), 0)
	}
}

// checkContents compares the whole keyed backend with m, by scan and by get.
func checkContents(t testing.TB, kb sdk.KeyedStateBackend, m model) {
	t.Helper()
	got := scanAll(t, kb, nil, nil, 1000)
	keys := slices.Sorted(maps.Keys(m))
	if len(got) != len(keys) {
		t.Fatalf("backend holds %d keys, want %d", len(got), len(keys))
	}
	for i, kv := range got {
		if string(kv.Key) != keys[i] || !bytes.Equal(kv.Value, m[keys[i]]) {
			t.Fatalf("pair %d: got %q=%.20q, want %q=%.20q", i, kv.Key, kv.Value, keys[i], m[keys[i]])
		}
	}
	bkeys := make([][]byte, len(keys))
	for i, k := range keys {
		bkeys[i] = []byte(k)
	}
	vals, err := kb.Get(bg, bkeys)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	for i, v := range vals {
		if v == nil || !bytes.Equal(v, m[keys[i]]) {
			t.Fatalf("Get(%q) = %.20q, want %.20q", keys[i], v, m[keys[i]])
		}
	}
}

func TestGetWriteDelete(t *testing.T) {
	kb := openKeyed(t, testPlugin(t, nil), params("rw", 0, 1))
	m := model{}
	fill(t, kb, m, sdk.KeyGroupRange{Start: 0, End: 128}, 5000, 10, "v")
	// Later mutations of one key in a batch win.
	k := key(7, "same")
	mustWrite(t, kb, m, []sdk.Mutation{
		{Key: k, Value: []byte("1")}, {Key: k, Delete: true}, {Key: k, Value: []byte("3")},
		{Key: key(8, "gone"), Value: []byte("x")}, {Key: key(8, "gone"), Delete: true},
		{Key: key(9, "never-there"), Delete: true},
	})
	var dels []sdk.Mutation
	for i := 0; i < 5000; i += 2 {
		dels = append(dels, sdk.Mutation{Key: key(i%128, fmt.Sprintf("k%07d", i)), Delete: true})
	}
	mustWrite(t, kb, m, dels)
	checkContents(t, kb, m)
	vals, err := kb.Get(bg, [][]byte{k, key(8, "gone"), key(1, "k0000001"), key(0, "k0000000"), k})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"3", "", string(m[string(key(1, "k0000001"))]), "", "3"}
	for i, v := range vals {
		if string(v) != want[i] || (want[i] == "") != (v == nil) {
			t.Fatalf("Get value %d = %q (nil %v), want %q", i, v, v == nil, want[i])
		}
	}
	if vals, err := kb.Get(bg, nil); err != nil || len(vals) != 0 {
		t.Fatalf("empty Get = %v, %v", vals, err)
	}
}

func TestNilAndEmptyValues(t *testing.T) {
	kb := openKeyed(t, testPlugin(t, nil), params("empty", 0, 1))
	mustWrite(t, kb, nil, []sdk.Mutation{{Key: key(1, "nil"), Value: nil}, {Key: key(1, "empty"), Value: []byte{}}})
	vals, err := kb.Get(bg, [][]byte{key(1, "nil"), key(1, "empty"), key(1, "absent")})
	if err != nil {
		t.Fatal(err)
	}
	if vals[0] == nil || len(vals[0]) != 0 || vals[1] == nil || len(vals[1]) != 0 || vals[2] != nil {
		t.Fatalf("Get = %#v, want two empty non-nil values and a nil one", vals)
	}
	kvs, err := kb.Scan(bg, nil, nil, 0)
	if err != nil || len(kvs) != 2 || kvs[0].Value == nil || kvs[1].Value == nil {
		t.Fatalf("Scan = %#v, %v; want two present empty values", kvs, err)
	}
}

func TestValuesAreCopies(t *testing.T) {
	kb := openKeyed(t, testPlugin(t, nil), params("copies", 0, 1))
	v := []byte("original")
	mustWrite(t, kb, nil, []sdk.Mutation{{Key: key(2, "k"), Value: v}})
	copy(v, "CHANGED!")
	got, err := kb.Get(bg, [][]byte{key(2, "k")})
	if err != nil || string(got[0]) != "original" {
		t.Fatalf("after changing the written buffer: %q, %v", got[0], err)
	}
	copy(got[0], "CHANGED!")
	kvs, _ := kb.Scan(bg, nil, nil, 10)
	copy(kvs[0].Value, "CHANGED!")
	copy(kvs[0].Key, "XX")
	got, err = kb.Get(bg, [][]byte{key(2, "k")})
	if err != nil || string(got[0]) != "original" {
		t.Fatalf("after changing returned buffers: %q, %v", got[0], err)
	}
}

func TestScan(t *testing.T) {
	kb := openKeyed(t, testPlugin(t, nil), params("scan", 1, 4)) // key groups [32,64)
	m := model{}
	fill(t, kb, m, sdk.KeyGroupRange{Start: 32, End: 64}, 3000, 5, "s")
	mustWrite(t, kb, m, []sdk.Mutation{{Key: []byte{40}, Value: []byte("short key")}, {Key: key(33, ""), Value: []byte("bare prefix")}})
	keys := slices.Sorted(maps.Keys(m))
	cases := []struct {
		name       string
		start, end []byte
	}{
		{"all", nil, nil},
		{"one group", key(40, ""), key(41, "")},
		{"groups", key(35, "k0000500"), key(50, "k0001000")},
		{"open end", key(60, "k00010"), nil},
		{"short bounds", []byte{40}, []byte{41}},
		{"empty range", key(40, "b"), key(40, "a")},
		{"outside", key(100, ""), nil},
	}
	for _, c := range cases {
		var want []string
		for _, k := range keys {
			if k >= string(c.start) && (c.end == nil || k < string(c.end)) {
				want = append(want, k)
			}
		}
		for _, limit := range []int{0, 1, 7, 1000, 100000} {
			got := scanAll(t, kb, c.start, c.end, limit)
			if len(got) != len(want) {
				t.Fatalf("%s, limit %d: %d pairs, want %d", c.name, limit, len(got), len(want))
			}
			for i := range got {
				if string(got[i].Key) != want[i] || !bytes.Equal(got[i].Value, m[want[i]]) {
					t.Fatalf("%s, limit %d: pair %d is %q, want %q", c.name, limit, i, got[i].Key, want[i])
				}
			}
		}
		page, err := kb.Scan(bg, c.start, c.end, 5)
		if err != nil || len(page) != min(5, len(want)) {
			t.Fatalf("%s: first page of 5 has %d pairs (%v), want %d", c.name, len(page), err, min(5, len(want)))
		}
	}
}

// snapshotTo runs the asynchronous part of s into streams and releases it.
func snapshotTo(t testing.TB, s sdk.Snapshot, streams *memStreams) []sdk.KeyedStateHandle {
	t.Helper()
	defer s.Release()
	hs, err := s.Write(bg, streams)
	if err != nil {
		t.Fatalf("Snapshot.Write: %v", err)
	}
	for _, h := range hs {
		if h.Format != sdk.FormatCanonical {
			t.Fatalf("snapshot format %q, want %q", h.Format, sdk.FormatCanonical)
		}
		for _, f := range h.Files {
			if f.Handle.Scope != sdk.ScopeExclusive {
				t.Fatalf("snapshot stream %q has scope %v", f.Name, f.Handle.Scope)
			}
		}
	}
	return hs
}

func restored(t testing.TB, sb sdk.StateBackend, p sdk.KeyedBackendParams, hs []sdk.KeyedStateHandle, streams *memStreams) sdk.KeyedStateBackend {
	t.Helper()
	kb := openKeyed(t, sb, p)
	if err := kb.Restore(bg, hs, streams); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	return kb
}

func TestSnapshotIsolation(t *testing.T) {
	sb := testPlugin(t, nil)
	kb := openKeyed(t, sb, params("iso", 0, 1))
	m := model{}
	all := sdk.KeyGroupRange{Start: 0, End: 128}
	fill(t, kb, m, all, 20000, 50, "before")
	streams := newMemStreams()

	// Two overlapping snapshots, with writes before, between and during their uploads.
	s1, err := kb.Snapshot(bg, sdk.SnapshotOptions{CheckpointID: 1})
	if err != nil {
		t.Fatal(err)
	}
	m1 := maps.Clone(m)
	fill(t, kb, m, sdk.KeyGroupRange{Start: 0, End: 64}, 5000, 50, "between")
	s2, err := kb.Snapshot(bg, sdk.SnapshotOptions{CheckpointID: 2})
	if err != nil {
		t.Fatal(err)
	}
	m2 := maps.Clone(m)

	var wg sync.WaitGroup
	var h1, h2 []sdk.KeyedStateHandle
	var e1, e2 error
	wg.Add(2)
	go func() { defer wg.Done(); defer s2.Release(); h2, e2 = s2.Write(bg, streams) }()
	go func() { defer wg.Done(); defer s1.Release(); h1, e1 = s1.Write(bg, streams) }()
	for round := range 20 {
		var muts []sdk.Mutation
		for i := round; i < 20000; i += 37 {
			k := key(i%128, fmt.Sprintf("k%07d", i))
			if i%3 == 0 {
				muts = append(muts, sdk.Mutation{Key: k, Delete: true})
			} else {
				muts = append(muts, sdk.Mutation{Key: k, Value: []byte(fmt.Sprintf("after-%d", round))})
			}
		}
		muts = append(muts, sdk.Mutation{Key: key(round, "new"), Value: []byte("new")})
		mustWrite(t, kb, m, muts)
		if _, err := kb.Get(bg, [][]byte{key(round, "new")}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if e1 != nil || e2 != nil {
		t.Fatalf("Snapshot.Write: %v, %v", e1, e2)
	}
	checkContents(t, kb, m)
	checkContents(t, restored(t, sb, params("iso-1", 0, 1), h1, streams), m1)
	checkContents(t, restored(t, sb, params("iso-2", 0, 1), h2, streams), m2)
	if n := streams.openStreams(); n != 0 {
		t.Fatalf("%d streams left open", n)
	}

	// A snapshot released without Write leaves the backend working.
	s3, err := kb.Snapshot(bg, sdk.SnapshotOptions{CheckpointID: 3})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, kb, m, all, 100, 3, "x")
	s3.Release()
	fill(t, kb, m, all, 200, 3, "y")
	checkContents(t, kb, m)
	checkContents(t, restored(t, sb, params("iso-4", 0, 1), snapshotTo(t, mustSnapshot(t, kb, 4), streams), streams), m)
}

func mustSnapshot(t testing.TB, kb sdk.KeyedStateBackend, id int64) sdk.Snapshot {
	t.Helper()
	s, err := kb.Snapshot(bg, sdk.SnapshotOptions{CheckpointID: id})
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	return s
}

func TestRestoreRescales(t *testing.T) {
	sb := testPlugin(t, nil)
	streams := newMemStreams()
	all := sdk.KeyGroupRange{Start: 0, End: 128}
	// Two subtasks of parallelism 2 ...
	m := model{}
	var handles []sdk.KeyedStateHandle
	for i := range 2 {
		p := params("old", i, 2)
		kb := openKeyed(t, sb, p)
		fill(t, kb, m, p.KeyGroups, 3000, 20, fmt.Sprint(i))
		handles = append(handles, snapshotTo(t, mustSnapshot(t, kb, 1), streams)...)
	}
	// ... restore into parallelism 3 (each keeps its own key groups) and 1 (all of them).
	for i := range 3 {
		p := params("new", i, 3)
		checkContents(t, restored(t, sb, p, handles, streams), m.within(p.KeyGroups))
	}
	checkContents(t, restored(t, sb, params("one", 0, 1), handles, streams), m.within(all))
	// An empty handle list restores nothing.
	checkContents(t, restored(t, sb, params("none", 0, 1), nil, streams), model{})
}

func TestRestoreRefusesOtherFormats(t *testing.T) {
	sb := testPlugin(t, nil)
	kb := openKeyed(t, sb, params("fmt", 0, 1))
	err := kb.Restore(bg, []sdk.KeyedStateHandle{{KeyGroups: sdk.KeyGroupRange{Start: 0, End: 128}, Format: "rocksdb-native-v9"}}, newMemStreams())
	if !errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), "rocksdb-native-v9") || !strings.Contains(err.Error(), sb.PluginInfo().Name) {
		t.Fatalf("Restore of a foreign format: %v; want ErrUnsupported naming the format and %q", err, sb.PluginInfo().Name)
	}
}

func TestRestoreCorrupt(t *testing.T) {
	sb := testPlugin(t, nil)
	streams := newMemStreams()
	kb := openKeyed(t, sb, params("src", 0, 1))
	fill(t, kb, nil, sdk.KeyGroupRange{Start: 0, End: 128}, 1000, 10, "c")
	hs := snapshotTo(t, mustSnapshot(t, kb, 1), streams)
	b := streams.bytesOf(hs[0].Files[0].Handle)
	b[len(b)/2] ^= 0x55
	hs[0].Files[0].Handle = streams.replace(hs[0].Files[0].Handle, b)
	err := openKeyed(t, sb, params("dst", 0, 1)).Restore(bg, hs, streams)
	if !errors.Is(err, sdk.ErrCorrupt) {
		t.Fatalf("Restore of a damaged stream: %v, want ErrCorrupt", err)
	}
}

func TestClosedBackendFails(t *testing.T) {
	sb := testPlugin(t, nil)
	kb, err := sb.CreateKeyedStateBackend(bg, params("closed", 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	fill(t, kb, nil, sdk.KeyGroupRange{Start: 0, End: 128}, 100, 10, "z")
	s := mustSnapshot(t, kb, 1)
	if err := kb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := kb.Get(bg, [][]byte{key(1, "a")}); err == nil {
		t.Fatal("Get after Close succeeded")
	}
	if err := kb.Write(bg, []sdk.Mutation{{Key: key(1, "a")}}); err == nil {
		t.Fatal("Write after Close succeeded")
	}
	streams := newMemStreams()
	if _, err := s.Write(bg, streams); err == nil {
		t.Fatal("Snapshot.Write after Close succeeded")
	}
	s.Release()
	if n := streams.openStreams(); n != 0 {
		t.Fatalf("%d streams left open", n)
	}
}

func TestInvalidKeyGroupRange(t *testing.T) {
	p := params("bad", 0, 1)
	p.KeyGroups = sdk.KeyGroupRange{Start: 5, End: 5}
	if _, err := testPlugin(t, nil).CreateKeyedStateBackend(bg, p); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Fatalf("empty key group range: %v, want ErrInvalidArgument", err)
	}
}

package sdktest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

func keyedCreateChecks(t *testing.T, factory BackendFactory) {
	t.Run("SeveralSubtasksConcurrently", func(t *testing.T) {
		sb := factory(t)
		const n = 4
		kbs := make([]sdk.KeyedStateBackend, n)
		models := make([]model, n)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range kbs {
			p := subtaskParams("several", i, n)
			kbs[i] = openKeyed(t, sb, p)
			models[i] = make(model)
			for j := 0; j < 2000; j++ {
				g := p.KeyGroups.Start + j%(p.KeyGroups.End-p.KeyGroups.Start)
				models[i].set(string(numberedKey(g, j)), []byte(fmt.Sprintf("subtask-%d-%d", i, j)))
			}
		}
		for i := range kbs {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				var muts []sdk.Mutation
				for _, kv := range models[i].sorted(nil, nil) {
					muts = append(muts, sdk.Mutation{Key: kv.Key, Value: kv.Value})
				}
				for start := 0; start < len(muts); start += 100 {
					if err := kbs[i].Write(context.Background(), muts[start:min(start+100, len(muts))]); err != nil {
						errs[i] = fmt.Errorf("subtask %d: Write: %w", i, err)
						return
					}
				}
			}(i)
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for i, kb := range kbs {
			t.Run(fmt.Sprintf("Subtask%d", i), func(t *testing.T) { checkContents(t, kb, models[i]) })
		}
	})
	t.Run("SameOperatorInTwoJobs", func(t *testing.T) {
		sb := factory(t)
		a, b := fullParams("shared-name"), fullParams("shared-name")
		a.JobID, b.JobID = "sdktest-job-a", "sdktest-job-b"
		ka, kb := openKeyed(t, sb, a), openKeyed(t, sb, b)
		ma, mb := make(model), make(model)
		mustWrite(t, ka, ma, []sdk.Mutation{{Key: stateKey(1, "k"), Value: []byte("job-a")}})
		mustWrite(t, kb, mb, []sdk.Mutation{{Key: stateKey(1, "k"), Value: []byte("job-b")}, {Key: stateKey(2, "only-b"), Value: []byte("b")}})
		checkContents(t, ka, ma)
		checkContents(t, kb, mb)
	})
	t.Run("StartsEmpty", func(t *testing.T) {
		kb := openKeyed(t, factory(t), fullParams("empty"))
		checkContents(t, kb, model{})
	})
}

func getChecks(t *testing.T, factory BackendFactory) {
	t.Run("AbsentIsNilPresentEmptyIsNonNil", func(t *testing.T) {
		kb := openKeyed(t, factory(t), fullParams("get-empty"))
		mustWrite(t, kb, nil, []sdk.Mutation{
			{Key: stateKey(3, "empty"), Value: []byte{}},
			{Key: stateKey(3, "nil-value"), Value: nil},
			{Key: stateKey(3, "full"), Value: []byte("v")},
		})
		keys := [][]byte{stateKey(3, "absent"), stateKey(3, "empty"), stateKey(3, "nil-value"), stateKey(3, "full"), stateKey(4, "empty")}
		vals, err := kb.Get(context.Background(), keys)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if len(vals) != len(keys) {
			t.Fatalf("Get of %d keys returned %d values", len(keys), len(vals))
		}
		if vals[0] != nil {
			t.Errorf("Get of absent key: %s, want nil", short(vals[0]))
		}
		if vals[1] == nil || len(vals[1]) != 0 {
			t.Errorf("Get of key written with an empty value: %s, want a non-nil empty slice", short(vals[1]))
		}
		if vals[2] == nil || len(vals[2]) != 0 {
			t.Errorf("Get of key written with a nil Value (empty): %s, want a non-nil empty slice", short(vals[2]))
		}
		if string(vals[3]) != "v" {
			t.Errorf("Get of present key: %s, want \"v\"", short(vals[3]))
		}
		if vals[4] != nil {
			t.Errorf("Get of same suffix in another key group: %s, want nil", short(vals[4]))
		}
	})
	t.Run("ManyKeysInOneCall", func(t *testing.T) {
		kb := openKeyed(t, factory(t), fullParams("get-many"))
		m := make(model)
		fill(t, kb, m, fullParams("").KeyGroups, 5000, "v1")
		var keys [][]byte
		for i := 0; i < 10000; i++ {
			keys = append(keys, numberedKey(i%defaultMaxParallelism, i)) // i >= 5000 are absent
		}
		vals, err := kb.Get(context.Background(), keys)
		if err != nil {
			t.Fatalf("Get of %d keys: %v", len(keys), err)
		}
		if len(vals) != len(keys) {
			t.Fatalf("Get of %d keys returned %d values", len(keys), len(vals))
		}
		for i, k := range keys {
			want, ok := m[string(k)]
			if !ok && vals[i] != nil {
				t.Fatalf("Get: absent key %d (%x) = %s, want nil", i, k, short(vals[i]))
			}
			if ok && !bytes.Equal(vals[i], want) {
				t.Fatalf("Get: key %d (%x) = %s, want %s", i, k, short(vals[i]), short(want))
			}
		}
	})
	t.Run("DuplicateKeysInOneCall", func(t *testing.T) {
		kb := openKeyed(t, factory(t), fullParams("get-dup"))
		mustWrite(t, kb, nil, []sdk.Mutation{{Key: stateKey(0, "a"), Value: []byte("1")}})
		vals, err := kb.Get(context.Background(), [][]byte{stateKey(0, "a"), stateKey(0, "b"), stateKey(0, "a")})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if len(vals) != 3 || string(vals[0]) != "1" || vals[1] != nil || string(vals[2]) != "1" {
			t.Fatalf("Get [a, b, a] = %q, want [\"1\" nil \"1\"]", vals)
		}
	})
	t.Run("NoKeys", func(t *testing.T) {
		kb := openKeyed(t, factory(t), fullParams("get-none"))
		vals, err := kb.Get(context.Background(), nil)
		if err != nil {
			t.Fatalf("Get of no keys: %v", err)
		}
		if len(vals) != 0 {
			t.Fatalf("Get of no keys returned %d values", len(vals))
		}
	})
}

func writeChecks(t *testing.T, factory BackendFactory) {
	t.Run("AppliesMutationsInOrder", func(t *testing.T) {
		kb := openKeyed(t, factory(t), fullParams("write-order"))
		m := make(model)
		mustWrite(t, kb, m, []sdk.Mutation{
			{Key: stateKey(7, "put-then-delete"), Value: []byte("gone")},
			{Key: stateKey(7, "put-then-delete"), Delete: true},
			{Key: stateKey(7, "delete-then-put"), Delete: true},
			{Key: stateKey(7, "delete-then-put"), Value: []byte("back")},
			{Key: stateKey(7, "overwritten"), Value: []byte("first")},
			{Key: stateKey(7, "overwritten"), Value: []byte("second")},
			{Key: stateKey(7, "delete-absent"), Delete: true},
		})
		if len(m) != 2 {
			t.Fatalf("kit error: model has %d keys", len(m))
		}
		checkContents(t, kb, m)
		mustWrite(t, kb, m, []sdk.Mutation{
			{Key: stateKey(7, "overwritten"), Delete: true},
			{Key: stateKey(7, "overwritten"), Value: []byte{}},
			{Key: stateKey(7, "delete-then-put"), Delete: true},
		})
		checkContents(t, kb, m)
	})
	t.Run("BatchOf10000Keys", func(t *testing.T) {
		kb := openKeyed(t, factory(t), fullParams("write-10k"))
		m := make(model)
		fill(t, kb, m, fullParams("").KeyGroups, 10000, "v1")
		checkContents(t, kb, m)
		var muts []sdk.Mutation
		for i, k := range m.keys() {
			if i%2 == 0 {
				muts = append(muts, sdk.Mutation{Key: k, Delete: true})
			} else {
				muts = append(muts, sdk.Mutation{Key: k, Value: []byte(fmt.Sprintf("v2-%d", i))})
			}
		}
		mustWrite(t, kb, m, muts)
		checkContents(t, kb, m)
	})
	t.Run("EmptyBatch", func(t *testing.T) {
		kb := openKeyed(t, factory(t), fullParams("write-none"))
		mustWrite(t, kb, nil, nil)
		checkContents(t, kb, model{})
	})
	t.Run("BinaryKeysAndValues", func(t *testing.T) {
		kb := openKeyed(t, factory(t), fullParams("write-binary"))
		m := make(model)
		big := bytes.Repeat([]byte{0, 0xff, 0x80}, 100000)
		mustWrite(t, kb, m, []sdk.Mutation{
			{Key: stateKey(0, ""), Value: []byte("prefix only")},
			{Key: stateKey(0, "\x00"), Value: []byte{0}},
			{Key: stateKey(127, "\xff\xff\xff"), Value: []byte{0xff}},
			{Key: stateKey(5, "big"), Value: big},
		})
		checkContents(t, kb, m)
	})
}

// scanFixture writes keys whose byte order is easy to get wrong: prefix-only keys, zero and
// 0xff bytes, keys that are prefixes of others, several key groups.
func scanFixture(t *testing.T, kb sdk.KeyedStateBackend) model {
	t.Helper()
	m := make(model)
	var muts []sdk.Mutation
	suffixes := []string{"", "\x00", "\x00\x00", "a", "a\x00", "a\xff", "ab", "b", "\x7f", "\x80", "\xff", "\xff\xff"}
	for _, g := range []int{0, 1, 2, 63, 64, 126, 127} {
		for i, s := range suffixes {
			muts = append(muts, sdk.Mutation{Key: stateKey(g, s), Value: []byte(fmt.Sprintf("g%d-%d", g, i))})
		}
	}
	// Write in reverse so that insertion order differs from key order.
	for i, j := 0, len(muts)-1; i < j; i, j = i+1, j-1 {
		muts[i], muts[j] = muts[j], muts[i]
	}
	mustWrite(t, kb, m, muts)
	return m
}

func scanChecks(t *testing.T, factory BackendFactory) {
	sb := factory(t)
	kb := openKeyed(t, sb, fullParams("scan"))
	m := scanFixture(t, kb)
	scan := func(t *testing.T, start, end []byte, limit int) []sdk.KV {
		t.Helper()
		kvs, err := kb.Scan(context.Background(), start, end, limit)
		if err != nil {
			t.Fatalf("Scan(start %x, end %x, limit %d): %v", start, end, limit, err)
		}
		return kvs
	}
	t.Run("AscendingByteOrder", func(t *testing.T) {
		if d := diffKVs(scanAll(t, kb, nil, nil, 1000), m.sorted(nil, nil)); d != "" {
			t.Fatalf("Scan(nil, nil, 1000): %s", d)
		}
	})
	t.Run("BoundsAreHalfOpen", func(t *testing.T) {
		start, end := stateKey(1, "a"), stateKey(1, "b")
		got := scan(t, start, end, 1000)
		if d := diffKVs(got, m.sorted(start, end)); d != "" {
			t.Fatalf("Scan([1]a, [1]b): %s (start must be included, end excluded)", d)
		}
	})
	t.Run("OneKeyGroup", func(t *testing.T) {
		start, end := sdk.KeyGroupPrefix(63), sdk.KeyGroupPrefix(64)
		if d := diffKVs(scanAll(t, kb, start, end, 1000), m.sorted(start, end)); d != "" {
			t.Fatalf("Scan of key group 63: %s", d)
		}
	})
	t.Run("NilEndIsUnbounded", func(t *testing.T) {
		start := stateKey(126, "\xff")
		if d := diffKVs(scanAll(t, kb, start, nil, 1000), m.sorted(start, nil)); d != "" {
			t.Fatalf("Scan([126]ff, nil): %s", d)
		}
	})
	t.Run("StartAfterEverythingIsEmpty", func(t *testing.T) {
		if got := scan(t, stateKey(200, ""), nil, 10); len(got) != 0 {
			t.Fatalf("Scan past the last key returned %d pairs, first %x", len(got), got[0].Key)
		}
	})
	t.Run("EmptyRangeIsEmpty", func(t *testing.T) {
		if got := scan(t, stateKey(2, "b"), stateKey(2, "b"), 10); len(got) != 0 {
			t.Fatalf("Scan with start == end returned %d pairs", len(got))
		}
		if got := scan(t, stateKey(3, ""), stateKey(63, ""), 10); len(got) != 0 {
			t.Fatalf("Scan over key groups without keys returned %d pairs", len(got))
		}
	})
	t.Run("LimitIsHonoured", func(t *testing.T) {
		for _, limit := range []int{1, 2, 5} {
			got := scan(t, nil, nil, limit)
			if len(got) == 0 || len(got) > limit {
				t.Fatalf("Scan(nil, nil, limit %d) returned %d pairs, want 1..%d", limit, len(got), limit)
			}
			if d := diffKVs(got, m.sorted(nil, nil)[:len(got)]); d != "" {
				t.Fatalf("Scan(nil, nil, limit %d): %s", limit, d)
			}
		}
	})
	t.Run("PaginationByLastKeyPlusZero", func(t *testing.T) {
		for _, limit := range []int{1, 3, 7} {
			if d := diffKVs(scanAll(t, kb, nil, nil, limit), m.sorted(nil, nil)); d != "" {
				t.Fatalf("paging with limit %d: %s", limit, d)
			}
			start, end := stateKey(1, "\x00"), stateKey(2, "b")
			if d := diffKVs(scanAll(t, kb, start, end, limit), m.sorted(start, end)); d != "" {
				t.Fatalf("paging [1]00..[2]b with limit %d: %s", limit, d)
			}
		}
	})
	t.Run("NonPositiveLimitUsesPageSize", func(t *testing.T) {
		for _, limit := range []int{0, -1} {
			got := scan(t, nil, nil, limit)
			if len(got) == 0 {
				t.Fatalf("Scan(nil, nil, limit %d) returned nothing from a non-empty backend", limit)
			}
			if d := diffKVs(scanAll(t, kb, nil, nil, limit), m.sorted(nil, nil)); d != "" {
				t.Fatalf("paging with limit %d: %s", limit, d)
			}
		}
	})
	t.Run("SeesLaterWrites", func(t *testing.T) {
		kb2 := openKeyed(t, sb, fullParams("scan-later"))
		m2 := make(model)
		mustWrite(t, kb2, m2, []sdk.Mutation{{Key: stateKey(9, "b"), Value: []byte("1")}})
		if d := diffKVs(scanAll(t, kb2, nil, nil, 0), m2.sorted(nil, nil)); d != "" {
			t.Fatalf("Scan after the first write: %s", d)
		}
		mustWrite(t, kb2, m2, []sdk.Mutation{{Key: stateKey(9, "a"), Value: []byte("2")}, {Key: stateKey(9, "b"), Delete: true}, {Key: stateKey(9, "c"), Value: []byte{}}})
		if d := diffKVs(scanAll(t, kb2, nil, nil, 0), m2.sorted(nil, nil)); d != "" {
			t.Fatalf("Scan after more writes: %s", d)
		}
	})
}

package sdktest

import (
	"context"
	"fmt"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// scanFixture writes keys whose byte order is easy to get wrong: prefix-only keys, zero and
// 0xff bytes, keys that are prefixes of others, several key groups.
func scanFixture(t *testing.T, kb sdk.KeyedStateBackend) Model {
	t.Helper()
	m := make(Model)
	var muts []sdk.Mutation
	suffixes := []string{"", "\x00", "\x00\x00", "a", "a\x00", "a\xff", "ab", "b", "\x7f", "\x80", "\xff", "\xff\xff"}
	for _, g := range []int{0, 1, 2, 63, 64, 126, 127} {
		for i, s := range suffixes {
			muts = append(muts, sdk.Mutation{Key: StateKey(g, s), Value: []byte(fmt.Sprintf("g%d-%d", g, i))})
		}
	}
	// Write in reverse so that insertion order differs from key order.
	for i, j := 0, len(muts)-1; i < j; i, j = i+1, j-1 {
		muts[i], muts[j] = muts[j], muts[i]
	}
	MustWrite(t, kb, m, muts)
	return m
}

func scanChecks(t *testing.T, factory BackendFactory) {
	sb := factory(t)
	kb := OpenKeyed(t, sb, fullParams("scan"))
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
		start, end := StateKey(1, "a"), StateKey(1, "b")
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
		start := StateKey(126, "\xff")
		if d := diffKVs(scanAll(t, kb, start, nil, 1000), m.sorted(start, nil)); d != "" {
			t.Fatalf("Scan([126]ff, nil): %s", d)
		}
	})
	t.Run("StartAfterEverythingIsEmpty", func(t *testing.T) {
		if got := scan(t, StateKey(200, ""), nil, 10); len(got) != 0 {
			t.Fatalf("Scan past the last key returned %d pairs, first %x", len(got), got[0].Key)
		}
	})
	t.Run("BoundsShorterThanKeyGroupPrefix", func(t *testing.T) {
		start, end := []byte{0}, []byte{0, 64}
		if d := diffKVs(scanAll(t, kb, start, end, 5), m.sorted(start, end)); d != "" {
			t.Fatalf("Scan(00, 0040): %s", d)
		}
	})
	t.Run("EmptyRangeIsEmpty", func(t *testing.T) {
		if got := scan(t, StateKey(2, "b"), StateKey(2, "b"), 10); len(got) != 0 {
			t.Fatalf("Scan with start == end returned %d pairs", len(got))
		}
		if got := scan(t, StateKey(3, ""), StateKey(63, ""), 10); len(got) != 0 {
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
			start, end := StateKey(1, "\x00"), StateKey(2, "b")
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
	t.Run("PresentEmptyValuesAreNonNil", func(t *testing.T) {
		kb2 := OpenKeyed(t, sb, fullParams("scan-empty"))
		MustWrite(t, kb2, nil, []sdk.Mutation{{Key: StateKey(5, "empty"), Value: []byte{}}, {Key: StateKey(5, "nil-value"), Value: nil}})
		kvs, err := kb2.Scan(context.Background(), nil, nil, 0)
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if len(kvs) != 2 || kvs[0].Value == nil || len(kvs[0].Value) != 0 || kvs[1].Value == nil || len(kvs[1].Value) != 0 {
			t.Fatalf("Scan of two keys written with empty and nil values = %q; want both, each with a non-nil empty value", kvs)
		}
	})
	t.Run("ReturnedPairsAreCopies", func(t *testing.T) { checkScanCopies(t, sb) })
	t.Run("SeesLaterWrites", func(t *testing.T) {
		kb2 := OpenKeyed(t, sb, fullParams("scan-later"))
		m2 := make(Model)
		MustWrite(t, kb2, m2, []sdk.Mutation{{Key: StateKey(9, "b"), Value: []byte("1")}})
		if d := diffKVs(scanAll(t, kb2, nil, nil, 0), m2.sorted(nil, nil)); d != "" {
			t.Fatalf("Scan after the first write: %s", d)
		}
		MustWrite(t, kb2, m2, []sdk.Mutation{{Key: StateKey(9, "a"), Value: []byte("2")}, {Key: StateKey(9, "b"), Delete: true}, {Key: StateKey(9, "c"), Value: []byte{}}})
		if d := diffKVs(scanAll(t, kb2, nil, nil, 0), m2.sorted(nil, nil)); d != "" {
			t.Fatalf("Scan after more writes: %s", d)
		}
	})
}

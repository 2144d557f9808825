package sdktest

import (
	"bytes"
	"context"
	"errors"
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
		models := make([]Model, n)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range kbs {
			p := Params("several", i, n)
			kbs[i] = OpenKeyed(t, sb, p)
			models[i] = make(Model)
			for j := 0; j < 2000; j++ {
				g := p.KeyGroups.Start + j%(p.KeyGroups.End-p.KeyGroups.Start)
				models[i][string(NumberedKey(g, j))] = []byte(fmt.Sprintf("subtask-%d-%d", i, j))
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
			t.Run(fmt.Sprintf("Subtask%d", i), func(t *testing.T) { CheckContents(t, kb, models[i]) })
		}
	})
	t.Run("SameOperatorInTwoJobs", func(t *testing.T) {
		sb := factory(t)
		a, b := fullParams("shared-name"), fullParams("shared-name")
		a.JobID, b.JobID = "sdktest-job-a", "sdktest-job-b"
		ka, kb := OpenKeyed(t, sb, a), OpenKeyed(t, sb, b)
		ma, mb := make(Model), make(Model)
		MustWrite(t, ka, ma, []sdk.Mutation{{Key: StateKey(1, "k"), Value: []byte("job-a")}})
		MustWrite(t, kb, mb, []sdk.Mutation{{Key: StateKey(1, "k"), Value: []byte("job-b")}, {Key: StateKey(2, "only-b"), Value: []byte("b")}})
		CheckContents(t, ka, ma)
		CheckContents(t, kb, mb)
	})
	t.Run("StartsEmpty", func(t *testing.T) {
		kb := OpenKeyed(t, factory(t), fullParams("empty"))
		CheckContents(t, kb, Model{})
	})
	t.Run("InvalidKeyGroupRangeIsInvalidArgument", func(t *testing.T) {
		sb := factory(t)
		for _, r := range []sdk.KeyGroupRange{{Start: 5, End: 5}, {Start: 10, End: 5}, {Start: -1, End: 4}} {
			p := fullParams("invalid-range")
			p.KeyGroups = r
			kb, err := sb.CreateKeyedStateBackend(context.Background(), p)
			if err == nil {
				t.Errorf("CreateKeyedStateBackend with key groups %s succeeded, want an error wrapping sdk.ErrInvalidArgument", r)
				if kb != nil {
					kb.Close()
				}
				continue
			}
			if !errors.Is(err, sdk.ErrInvalidArgument) {
				t.Errorf("CreateKeyedStateBackend with key groups %s: %v; want an error wrapping sdk.ErrInvalidArgument", r, err)
			}
		}
	})
}

func getChecks(t *testing.T, factory BackendFactory) {
	t.Run("AbsentIsNilPresentEmptyIsNonNil", func(t *testing.T) {
		kb := OpenKeyed(t, factory(t), fullParams("get-empty"))
		MustWrite(t, kb, nil, []sdk.Mutation{
			{Key: StateKey(3, "empty"), Value: []byte{}},
			{Key: StateKey(3, "nil-value"), Value: nil},
			{Key: StateKey(3, "full"), Value: []byte("v")},
		})
		keys := [][]byte{StateKey(3, "absent"), StateKey(3, "empty"), StateKey(3, "nil-value"), StateKey(3, "full"), StateKey(4, "empty")}
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
		kb := OpenKeyed(t, factory(t), fullParams("get-many"))
		m := make(Model)
		Fill(t, kb, m, fullParams("").KeyGroups, 5000, "v1")
		var keys [][]byte
		for i := 0; i < 10000; i++ {
			keys = append(keys, NumberedKey(i%defaultMaxParallelism, i)) // i >= 5000 are absent
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
		kb := OpenKeyed(t, factory(t), fullParams("get-dup"))
		MustWrite(t, kb, nil, []sdk.Mutation{{Key: StateKey(0, "a"), Value: []byte("1")}})
		vals, err := kb.Get(context.Background(), [][]byte{StateKey(0, "a"), StateKey(0, "b"), StateKey(0, "a")})
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if len(vals) != 3 || string(vals[0]) != "1" || vals[1] != nil || string(vals[2]) != "1" {
			t.Fatalf("Get [a, b, a] = %q, want [\"1\" nil \"1\"]", vals)
		}
	})
	t.Run("ReturnedValuesAreCopies", func(t *testing.T) { checkGetCopies(t, factory) })
	t.Run("NoKeys", func(t *testing.T) {
		kb := OpenKeyed(t, factory(t), fullParams("get-none"))
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
		kb := OpenKeyed(t, factory(t), fullParams("write-order"))
		m := make(Model)
		MustWrite(t, kb, m, []sdk.Mutation{
			{Key: StateKey(7, "put-then-delete"), Value: []byte("gone")},
			{Key: StateKey(7, "put-then-delete"), Delete: true},
			{Key: StateKey(7, "delete-then-put"), Delete: true},
			{Key: StateKey(7, "delete-then-put"), Value: []byte("back")},
			{Key: StateKey(7, "overwritten"), Value: []byte("first")},
			{Key: StateKey(7, "overwritten"), Value: []byte("second")},
			{Key: StateKey(7, "delete-absent"), Delete: true},
		})
		if len(m) != 2 {
			t.Fatalf("kit error: Model has %d keys", len(m))
		}
		CheckContents(t, kb, m)
		MustWrite(t, kb, m, []sdk.Mutation{
			{Key: StateKey(7, "overwritten"), Delete: true},
			{Key: StateKey(7, "overwritten"), Value: []byte{}},
			{Key: StateKey(7, "delete-then-put"), Delete: true},
		})
		CheckContents(t, kb, m)
	})
	t.Run("BatchOf10000Keys", func(t *testing.T) {
		kb := OpenKeyed(t, factory(t), fullParams("write-10k"))
		m := make(Model)
		Fill(t, kb, m, fullParams("").KeyGroups, 10000, "v1")
		CheckContents(t, kb, m)
		var muts []sdk.Mutation
		for i, k := range m.keys() {
			if i%2 == 0 {
				muts = append(muts, sdk.Mutation{Key: k, Delete: true})
			} else {
				muts = append(muts, sdk.Mutation{Key: k, Value: []byte(fmt.Sprintf("v2-%d", i))})
			}
		}
		MustWrite(t, kb, m, muts)
		CheckContents(t, kb, m)
	})
	t.Run("EmptyBatch", func(t *testing.T) {
		kb := OpenKeyed(t, factory(t), fullParams("write-none"))
		MustWrite(t, kb, nil, nil)
		CheckContents(t, kb, Model{})
	})
	t.Run("CallerMayReuseBuffers", func(t *testing.T) { checkWriteReusesBuffers(t, factory) })
	t.Run("BinaryKeysAndValues", func(t *testing.T) {
		kb := OpenKeyed(t, factory(t), fullParams("write-binary"))
		m := make(Model)
		big := bytes.Repeat([]byte{0, 0xff, 0x80}, 100000)
		MustWrite(t, kb, m, []sdk.Mutation{
			{Key: StateKey(0, ""), Value: []byte("prefix only")},
			{Key: StateKey(0, "\x00"), Value: []byte{0}},
			{Key: StateKey(127, "\xff\xff\xff"), Value: []byte{0xff}},
			{Key: StateKey(5, "big"), Value: big},
		})
		CheckContents(t, kb, m)
	})
}

package sdktest

import (
	"bytes"
	"context"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// BackendFactory returns a fresh, configured state backend plugin; it registers the
// plugin's teardown with t.Cleanup.
type BackendFactory = func(t *testing.T) sdk.StateBackend

// defaultMaxParallelism is the number of key groups the kit's keyed backends use.
const defaultMaxParallelism = 128

// StateBackend runs the state backend conformance suite against plugins made by factory.
// Every promise of sdk.StateBackend, sdk.KeyedStateBackend and sdk.Snapshot is a subtest of
// its own; factory is called at least once per subtest.
func StateBackend(t *testing.T, factory func(t *testing.T) sdk.StateBackend) {
	t.Helper()
	t.Run("Plugin", func(t *testing.T) { backendPluginChecks(t, factory) })
	t.Run("CreateKeyedStateBackend", func(t *testing.T) { keyedCreateChecks(t, factory) })
	t.Run("Get", func(t *testing.T) { getChecks(t, factory) })
	t.Run("Write", func(t *testing.T) { writeChecks(t, factory) })
	t.Run("Scan", func(t *testing.T) { scanChecks(t, factory) })
	t.Run("Snapshot", func(t *testing.T) { snapshotChecks(t, factory) })
	t.Run("Restore", func(t *testing.T) { restoreChecks(t, factory) })
	t.Run("Savepoint", func(t *testing.T) { savepointChecks(t, factory) })
	t.Run("Notify", func(t *testing.T) { notifyChecks(t, factory) })
	t.Run("Close", func(t *testing.T) { closeChecks(t, factory) })
	t.Run("LargeState", func(t *testing.T) { largeStateCheck(t, factory) })
	t.Run("AdoptedFiles", func(t *testing.T) { adoptedFileChecks(t, factory) })
}

// fullParams are the parameters of a single subtask owning all key groups.
func fullParams(operator string) sdk.KeyedBackendParams {
	return sdk.KeyedBackendParams{
		JobID:          "sdktest",
		OperatorID:     operator,
		Subtask:        0,
		Parallelism:    1,
		MaxParallelism: defaultMaxParallelism,
		KeyGroups:      sdk.KeyGroupRange{Start: 0, End: defaultMaxParallelism},
	}
}

// Params returns the parameters of subtask i of n of operator in job "sdktest", with 128 key
// groups split evenly between the subtasks, as the kit's own checks use them.
func Params(operator string, i, n int) sdk.KeyedBackendParams {
	p := fullParams(operator)
	p.Subtask, p.Parallelism = i, n
	p.KeyGroups = sdk.KeyGroupRange{Start: i * defaultMaxParallelism / n, End: (i + 1) * defaultMaxParallelism / n}
	return p
}

// OpenKeyed creates a keyed backend of sb and closes it when t ends; it fails t when
// CreateKeyedStateBackend fails or Close returns an error.
func OpenKeyed(t testing.TB, sb sdk.StateBackend, p sdk.KeyedBackendParams) sdk.KeyedStateBackend {
	t.Helper()
	kb := createUnmanaged(t, sb, p)
	t.Cleanup(func() {
		if err := kb.Close(); err != nil {
			t.Errorf("closing keyed backend %s subtask %d: %v", p.OperatorID, p.Subtask, err)
		}
	})
	return kb
}

// MustWrite applies muts to kb, failing t on an error, and to m unless m is nil.
func MustWrite(t testing.TB, kb sdk.KeyedStateBackend, m Model, muts []sdk.Mutation) {
	t.Helper()
	if err := kb.Write(context.Background(), muts); err != nil {
		t.Fatalf("Write of %d mutations: %v", len(muts), err)
	}
	if m != nil {
		m.Apply(muts)
	}
}

// scanAll reads [start, end) page by page with the given limit, checking every page
// against the Scan contract: at most limit pairs, in range, strictly ascending.
func scanAll(t testing.TB, kb sdk.KeyedStateBackend, start, end []byte, limit int) []sdk.KV {
	t.Helper()
	var out []sdk.KV
	from := start
	for page := 0; ; page++ {
		if page > 1<<20 {
			t.Fatalf("Scan did not finish after %d pages", page)
		}
		kvs, err := kb.Scan(context.Background(), from, end, limit)
		if err != nil {
			t.Fatalf("Scan(start %x, end %x, limit %d): %v", from, end, limit, err)
		}
		if len(kvs) == 0 {
			return out
		}
		if limit > 0 && len(kvs) > limit {
			t.Fatalf("Scan(start %x, end %x, limit %d) returned %d pairs, more than the limit", from, end, limit, len(kvs))
		}
		for i, kv := range kvs {
			if bytes.Compare(kv.Key, from) < 0 || (end != nil && bytes.Compare(kv.Key, end) >= 0) {
				t.Fatalf("Scan(start %x, end %x) returned key %x outside [start, end)", from, end, kv.Key)
			}
			if i > 0 && bytes.Compare(kvs[i-1].Key, kv.Key) >= 0 {
				t.Fatalf("Scan(start %x, end %x) returned key %x after %x: not strictly ascending", from, end, kv.Key, kvs[i-1].Key)
			}
			if kv.Value == nil {
				t.Fatalf("Scan returned a nil value for present key %x; want a non-nil (possibly empty) slice", kv.Key)
			}
		}
		out = append(out, kvs...)
		from = append(bytes.Clone(kvs[len(kvs)-1].Key), 0)
	}
}

// CheckContents verifies that kb holds exactly m, by a Scan of every key group (and of the
// keys after the last one) and by a batched Get of every key of m.
func CheckContents(t testing.TB, kb sdk.KeyedStateBackend, m Model) {
	t.Helper()
	// Scan key group by key group, as the runner does; a scan across key groups is
	// checked on a small state by the Scan subtests.
	all := m.sorted(nil, nil) // sorted once: the state may be large
	for g := 0; g <= defaultMaxParallelism; g++ {
		start, end := sdk.KeyGroupPrefix(g), sdk.KeyGroupPrefix(g+1)
		if g == defaultMaxParallelism {
			end = nil
		}
		if d := diffKVs(scanAll(t, kb, start, end, 0), between(all, start, end)); d != "" {
			t.Fatalf("Scan of key group %d differs from the expected state: %s", g, d)
		}
	}
	keys := keysOf(all)
	if len(keys) == 0 {
		return
	}
	const batch = 10000
	for from := 0; from < len(keys); from += batch {
		chunk := keys[from:min(from+batch, len(keys))]
		values, err := kb.Get(context.Background(), chunk)
		if err != nil {
			t.Fatalf("Get of %d keys: %v", len(chunk), err)
		}
		if len(values) != len(chunk) {
			t.Fatalf("Get of %d keys returned %d values", len(chunk), len(values))
		}
		for i, k := range chunk {
			if values[i] == nil || !bytes.Equal(values[i], m[string(k)]) {
				t.Fatalf("Get key %x = %s, want %s", k, short(values[i]), short(m[string(k)]))
			}
		}
	}
}

// Fill writes NumberedKey(r.Start+i%(r.End-r.Start), i) for i in [0, n), with values
// version + ":" + the key's suffix, to kb and to m (unless m is nil), in batches of at most
// 10,000 mutations.
func Fill(t testing.TB, kb sdk.KeyedStateBackend, m Model, r sdk.KeyGroupRange, n int, version string) {
	t.Helper()
	const batch = 10000
	muts := make([]sdk.Mutation, 0, batch)
	width := r.End - r.Start
	for i := 0; i < n; i++ {
		g := r.Start + i%width
		k := NumberedKey(g, i)
		muts = append(muts, sdk.Mutation{Key: k, Value: []byte(version + ":" + string(k[2:]))})
		if len(muts) == batch {
			MustWrite(t, kb, m, muts)
			muts = muts[:0]
		}
	}
	if len(muts) > 0 {
		MustWrite(t, kb, m, muts)
	}
}

package leveldb

import (
	"testing"

	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// canonicalSnapshot snapshots kb (parameters p) into streams and checks that the snapshot
// is canonical and written with exclusive streams only, as full checkpoints and savepoints
// of both built-in backends are.
func canonicalSnapshot(t testing.TB, kb sdk.KeyedStateBackend, p sdk.KeyedBackendParams, opts sdk.SnapshotOptions, streams *sdktest.MemoryStreams) []sdk.KeyedStateHandle {
	t.Helper()
	hs := sdktest.TakeSnapshot(t, kb, p, opts, streams)
	for _, h := range hs {
		if h.Format != sdk.FormatCanonical {
			t.Fatalf("snapshot %+v: format %q, want %q", opts, h.Format, sdk.FormatCanonical)
		}
		for _, f := range h.Files {
			if f.Handle.Scope != sdk.ScopeExclusive {
				t.Fatalf("snapshot %+v: stream %q has scope %v, want exclusive", opts, f.Name, f.Handle.Scope)
			}
		}
	}
	return hs
}

// TestCrossRestore moves state between hashmap and leveldb through the canonical format,
// rescaling on the way.
func TestCrossRestore(t *testing.T) {
	hm := hashmap.New()
	if err := hm.Configure(bg, nil); err != nil {
		t.Fatal(err)
	}
	ldb := testPlugin(t, nil)
	for _, c := range []struct {
		name     string
		from, to sdk.StateBackend
	}{{"hashmap to leveldb", hm, ldb}, {"leveldb to hashmap", ldb, hm}} {
		t.Run(c.name, func(t *testing.T) {
			streams := sdktest.NewMemoryStreams()
			p := sdktest.Params("src", 0, 1)
			src := sdktest.OpenKeyed(t, c.from, p)
			m := sdktest.Model{}
			sdktest.Fill(t, src, m, p.KeyGroups, 10000, "x")
			sdktest.MustWrite(t, src, m, []sdk.Mutation{{Key: sdktest.StateKey(5, "empty"), Value: []byte{}}})
			for _, savepoint := range []bool{false, true} {
				hs := canonicalSnapshot(t, src, p, sdk.SnapshotOptions{CheckpointID: 1, Savepoint: savepoint}, streams)
				sdktest.CheckContents(t, sdktest.OpenRestored(t, c.to, sdktest.Params("dst", 0, 1), hs, streams), m)
				for i := range 2 {
					q := sdktest.Params("half", i, 2)
					sdktest.CheckContents(t, sdktest.OpenRestored(t, c.to, q, hs, streams), m.Within(q.KeyGroups))
				}
			}
		})
	}
}

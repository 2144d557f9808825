// Package interop_test checks that the built-in state backends restore each other's
// snapshots. It lives apart from the plugins, which never import one another.
package interop_test

import (
	"context"
	"testing"

	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/plugins/leveldb/leveldb"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// TestCrossRestore moves state between hashmap and leveldb through the canonical format,
// rescaling on the way.
func TestCrossRestore(t *testing.T) {
	hm := hashmap.New()
	if err := hm.Configure(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ldb := leveldb.New()
	if err := ldb.Configure(context.Background(), sdk.Options{"localdir": t.TempDir()}); err != nil {
		t.Fatal(err)
	}
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
				hs := sdktest.TakeSnapshot(t, src, p, sdk.SnapshotOptions{CheckpointID: 1, Savepoint: savepoint}, streams)
				if f := hs[0].Format; f != sdk.FormatCanonical {
					t.Fatalf("savepoint %v: format %q, want %q", savepoint, f, sdk.FormatCanonical)
				}
				sdktest.CheckContents(t, sdktest.OpenRestored(t, c.to, sdktest.Params("dst", 0, 1), hs, streams), m)
				for i := range 2 {
					q := sdktest.Params("half", i, 2)
					sdktest.CheckContents(t, sdktest.OpenRestored(t, c.to, q, hs, streams), m.Within(q.KeyGroups))
				}
			}
		})
	}
}

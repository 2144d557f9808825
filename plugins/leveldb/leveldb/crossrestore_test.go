package leveldb

import (
	"testing"

	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/sdk"
)

// TestCrossRestore moves state between hashmap and leveldb through the canonical format,
// rescaling on the way.
func TestCrossRestore(t *testing.T) {
	hm := hashmap.New()
	if err := hm.Configure(bg, nil); err != nil {
		t.Fatal(err)
	}
	ldb := testPlugin(t, nil)
	all := sdk.KeyGroupRange{Start: 0, End: 128}
	for _, c := range []struct {
		name     string
		from, to sdk.StateBackend
	}{{"hashmap to leveldb", hm, ldb}, {"leveldb to hashmap", ldb, hm}} {
		t.Run(c.name, func(t *testing.T) {
			streams := newMemStreams()
			src := openKeyed(t, c.from, params("src", 0, 1))
			m := model{}
			fill(t, src, m, all, 10000, 30, "x")
			mustWrite(t, src, m, []sdk.Mutation{{Key: key(5, "empty"), Value: []byte{}}})
			for _, savepoint := range []bool{false, true} {
				s, err := src.Snapshot(bg, sdk.SnapshotOptions{CheckpointID: 1, Savepoint: savepoint})
				if err != nil {
					t.Fatal(err)
				}
				hs := snapshotTo(t, s, streams)
				checkContents(t, restored(t, c.to, params("dst", 0, 1), hs, streams), m)
				for i := range 2 {
					p := params("half", i, 2)
					checkContents(t, restored(t, c.to, p, hs, streams), m.within(p.KeyGroups))
				}
			}
		})
	}
}

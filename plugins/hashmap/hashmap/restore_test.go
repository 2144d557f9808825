package hashmap

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// TestRestoreEntryCountAndChunks: a snapshot's handle records its entry count; restores
// whose handles carry that count, none, or another backend's Meta give the same state, at
// the same and at half the parallelism; and writes after the restore, which replace values
// living in the restore's chunks, leave the other values intact.
func TestRestoreEntryCountAndChunks(t *testing.T) {
	const n = 20000
	b := testPlugin(t, nil)
	all := sdktest.Params("op", 0, 1)
	kb := sdktest.OpenKeyed(t, b, all)
	model := sdktest.Model{}
	sdktest.Fill(t, kb, model, all.KeyGroups, n, "v1")
	streams := sdktest.NewMemoryStreams()
	handles := sdktest.TakeSnapshot(t, kb, all, sdk.SnapshotOptions{CheckpointID: 1}, streams)
	if len(handles) != 1 {
		t.Fatalf("%d handles, want 1", len(handles))
	}
	if m, ok := decodeMeta(handles[0].Meta); !ok || m.Entries != n {
		t.Fatalf("handle Meta %q: %+v, %v; want %d entries", handles[0].Meta, m, ok, n)
	}
	variants := map[string][]byte{"count": handles[0].Meta, "none": nil, "foreign": []byte(`{"checkpoint":3,"keys":["x"]}`), "junk": []byte("\x00\x01")}
	for name, meta := range variants {
		for _, p := range []sdk.KeyedBackendParams{all, sdktest.Params("op", 1, 2)} {
			t.Run(fmt.Sprintf("%s/%s", name, p.KeyGroups), func(t *testing.T) {
				h := handles[0]
				h.Meta = meta
				restored := sdktest.OpenRestored(t, b, p, []sdk.KeyedStateHandle{h}, streams)
				defer restored.Close()
				want := sdktest.Model{}
				for k, v := range model {
					if p.KeyGroups.Contains(sdk.KeyGroupOf([]byte(k))) {
						want[k] = v
					}
				}
				sdktest.CheckContents(t, restored, want)
				// Replace every third value and delete every seventh key.
				var muts []sdk.Mutation
				i := 0
				for k := range want {
					switch {
					case i%7 == 0:
						muts = append(muts, sdk.Mutation{Key: []byte(k), Delete: true})
					case i%3 == 0:
						muts = append(muts, sdk.Mutation{Key: []byte(k), Value: bytes.Repeat([]byte{'w'}, i%50)})
					}
					i++
				}
				sdktest.MustWrite(t, restored, want, muts)
				sdktest.CheckContents(t, restored, want)
			})
		}
	}
}

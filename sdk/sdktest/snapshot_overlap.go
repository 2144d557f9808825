package sdktest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// checkOverlappingSnapshots takes two snapshots with writes between them, writes both at
// once while processing goes on, and restores each to its own view.
func checkOverlappingSnapshots(t *testing.T, factory BackendFactory) {
	p := fullParams("snap-overlap")
	kb := OpenKeyed(t, factory(t), p)
	m := make(Model)
	Fill(t, kb, m, p.KeyGroups, 3000, "v1")
	var snaps []sdk.Snapshot
	var views []Model
	for id := int64(1); id <= 2; id++ {
		snaps = append(snaps, startSnapshot(t, kb, sdk.SnapshotOptions{CheckpointID: id}))
		views = append(views, m.Clone())
		churn(t, kb, m, p.KeyGroups, 300, fmt.Sprintf("after-%d", id))
	}
	streams := NewMemoryStreams()
	handles := make([][]sdk.KeyedStateHandle, len(snaps))
	errs := make([]error, len(snaps))
	var wg sync.WaitGroup
	for i, snap := range snaps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer snap.Release()
			handles[i], errs[i] = snap.Write(context.Background(), streams)
		}()
	}
	func() {
		defer wg.Wait() // also when churn stops the test early
		churn(t, kb, m, p.KeyGroups, 300, "during")
	}()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Snapshot.Write of checkpoint %d, concurrent with the other's: %v", i+1, err)
		}
		checkHandles(t, handles[i], p)
	}
	if n := streams.OpenStreams(); n != 0 {
		t.Errorf("Snapshot.Write returned with %d streams neither closed nor turned into a handle", n)
	}
	CheckContents(t, kb, m)
	for i := range snaps {
		CheckContents(t, restoreFresh(t, factory, p, handles[i], streams), views[i])
	}
}

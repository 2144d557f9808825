package sdktest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// TwoWritersOfOneCheckpoint tests a storage whose checkpoints two runners of a job can
// reach (a directory, a bucket) for what happens when both write checkpoint N: a runner
// that lost the job while its metadata was being written (a write already under way cannot
// be called back) and its successor, which took the same id. factory is called
// twice, for the two runners' plugins: it must configure both alike, so that the same
// checkpoints reach both. An access of one
// job through each writes exclusive state and metadata at the same id, and both publish at once (rounds times, at new ids; then once more with one writer publishing
// only after the other has). Exactly one publication succeeds; the other fails with an
// error naming its location; DisposeOnFailure of the loser, as the runner calls it for a
// checkpoint that failed, leaves the winner's checkpoint whole (its metadata reads back as
// the winner wrote it, resolves and is listed once, its state reads back) and removes the
// loser's state.
func TwoWritersOfOneCheckpoint(t *testing.T, factory StorageFactory, rounds int) {
	t.Helper()
	ctx := context.Background()
	storages := [2]sdk.CheckpointStorage{factory(t), factory(t)}
	writers := [2]sdk.CheckpointStorageAccess{openAccess(t, storages[0], "writers"), openAccess(t, storages[1], "writers")}
	for round := range rounds + 1 {
		id := int64(round + 1)
		var locs [2]sdk.CheckpointStorageLocation
		var states [2]sdk.StreamStateHandle
		var outs [2]sdk.MetadataOutputStream
		var metadata [2][]byte
		for w, a := range writers {
			locs[w] = checkpointLocation(t, a, id)
			states[w] = writeStream(t, locs[w], sdk.ScopeExclusive, payload(256<<10, byte(2*round+w)))
			metadata[w] = []byte(fmt.Sprintf("metadata of checkpoint %d by writer %d", id, w))
			out, err := locs[w].CreateMetadataOutputStream(ctx)
			if err != nil {
				t.Fatalf("writer %d: CreateMetadataOutputStream of checkpoint %d: %v", w, id, err)
			}
			if _, err := out.Write(metadata[w]); err != nil {
				t.Fatalf("writer %d: writing the metadata of checkpoint %d: %v", w, id, err)
			}
			outs[w] = out
		}
		var errs [2]error
		var dones [2]sdk.CompletedCheckpointStorageLocation
		if round < rounds { // both at once
			var wg sync.WaitGroup
			start := make(chan struct{})
			for w := range writers {
				wg.Go(func() {
					<-start
					dones[w], errs[w] = outs[w].CloseAndFinalize(ctx)
				})
			}
			close(start)
			wg.Wait()
		} else { // writer 1 finds writer 0's metadata in place
			dones[0], errs[0] = outs[0].CloseAndFinalize(ctx)
			dones[1], errs[1] = outs[1].CloseAndFinalize(ctx)
		}
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("checkpoint %d: two writers published: errors %v and %v; want exactly one to succeed", id, errs[0], errs[1])
		}
		win, lose := 0, 1
		if errs[0] != nil {
			win, lose = 1, 0
		}
		if msg := errs[lose].Error(); !strings.Contains(msg, locs[lose].LocationReference()) {
			t.Fatalf("checkpoint %d: the second writer's error %q does not name its location %s", id, msg, locs[lose].LocationReference())
		}
		outs[lose].Close()
		if err := locs[lose].DisposeOnFailure(ctx); err != nil {
			t.Fatalf("checkpoint %d: DisposeOnFailure of the writer that lost the publication: %v", id, err)
		}
		for w, a := range writers {
			done := resolve(t, storages[w], a, dones[win].ExternalPointer, metadata[win])
			checkState(t, a, states[win], payload(256<<10, byte(2*round+win)))
			listed, err := a.ListCompletedCheckpoints(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, l := range listed {
				if l.ExternalPointer == done.ExternalPointer {
					n++
					if got := readState(t, a, l.Metadata); !bytes.Equal(got, metadata[win]) {
						t.Fatalf("checkpoint %d: the listed metadata reads %q; want the winner's %q", id, cut(got), cut(metadata[win]))
					}
				}
			}
			if n != 1 {
				t.Fatalf("checkpoint %d is listed %d times; want once", id, n)
			}
		}
		checkGone(t, writers[win], states[lose], "the writer that lost the publication disposed of its checkpoint")
	}
}

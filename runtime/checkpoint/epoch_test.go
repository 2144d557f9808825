package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/sdk"
)

// epochAccess is a job's completed checkpoints with their metadata inline in the listed
// locations; it records disposals.
type epochAccess struct {
	recordingAccess
	list []sdk.CompletedCheckpointStorageLocation
}

func (a *epochAccess) ListCompletedCheckpoints(context.Context) ([]sdk.CompletedCheckpointStorageLocation, error) {
	return slices.Clone(a.list), nil
}

// add lists checkpoint id of job "wc", written at lease epoch epoch (0: metadata of a
// runner that recorded none, encoded without the field).
func (a *epochAccess) add(t *testing.T, id, epoch int64) {
	t.Helper()
	m := &Metadata{Version: MetadataVersion, JobID: "wc", CheckpointID: id, Epoch: epoch, Time: time.Unix(id, 0).UTC(), Backend: "hashmap", MaxParallelism: 128}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	a.list = append(a.list, sdk.CompletedCheckpointStorageLocation{
		CheckpointID: id, ExternalPointer: fmt.Sprintf("/ck/wc/chk-%d", id),
		Metadata: sdk.StreamStateHandle{Inline: b, Size: int64(len(b)), Checksum: crc32.Checksum(b, castagnoli)},
	})
}

// TestNewerPrefersTheEpochThenTheID: a higher lease epoch wins whatever the ids; within
// an epoch the higher id wins; metadata written before epochs were recorded decodes as
// epoch 0, and metadata of epoch 0 encodes as such metadata did (no epoch field).
func TestNewerPrefersTheEpochThenTheID(t *testing.T) {
	for _, c := range []struct {
		a, b  Metadata
		newer bool
	}{
		{Metadata{Epoch: 4, CheckpointID: 5}, Metadata{Epoch: 3, CheckpointID: 7}, true},
		{Metadata{Epoch: 3, CheckpointID: 7}, Metadata{Epoch: 4, CheckpointID: 5}, false},
		{Metadata{Epoch: 3, CheckpointID: 8}, Metadata{Epoch: 3, CheckpointID: 7}, true},
		{Metadata{Epoch: 3, CheckpointID: 7}, Metadata{Epoch: 3, CheckpointID: 7}, false},
		{Metadata{CheckpointID: 9}, Metadata{CheckpointID: 8}, true},
		{Metadata{Epoch: 1, CheckpointID: 1}, Metadata{CheckpointID: 9}, true},
	} {
		if got := Newer(&c.a, &c.b); got != c.newer {
			t.Errorf("Newer(epoch %d id %d, epoch %d id %d) = %v, want %v", c.a.Epoch, c.a.CheckpointID, c.b.Epoch, c.b.CheckpointID, got, c.newer)
		}
	}
	// Metadata as a runner without epochs wrote it: the body has no epoch field.
	old := frame([]byte(`{"version":1,"job_id":"wc","checkpoint_id":9,"time":"2026-01-02T03:04:05Z","backend":"hashmap","max_parallelism":128,"operators":null,"added_bytes":0}`))
	m, err := DecodeMetadata(old)
	if err != nil {
		t.Fatalf("metadata without an epoch: %v", err)
	}
	if m.Epoch != 0 || m.CheckpointID != 9 {
		t.Fatalf("metadata without an epoch decoded as epoch %d, id %d; want epoch 0, id 9", m.Epoch, m.CheckpointID)
	}
	again, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, old) {
		t.Fatalf("metadata of epoch 0 encodes differently from metadata without epochs:\n%q\n%q", again, old)
	}
	m.Epoch = 5
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := DecodeMetadata(b); err != nil || back.Epoch != 5 {
		t.Fatalf("metadata of epoch 5 decodes as %+v, %v", back, err)
	}
}

// TestNewestPrefersTheSuccessorsEpoch: a runner of epoch 3 wrote checkpoints 1 to 3 and,
// frozen, landed the metadata of checkpoint 7 after the runner of epoch 4, which took the
// job over, completed checkpoints 5 and 6. --from latest restores 6, not the zombie's 7;
// the store adopts the zombie's checkpoint as older than 6, so retention disposes of it
// first, and no id of the storage is used again. Metadata without epochs (all 0) keeps
// the order by id.
func TestNewestPrefersTheSuccessorsEpoch(t *testing.T) {
	ctx := context.Background()
	a := &epochAccess{}
	for _, c := range []struct{ id, epoch int64 }{{1, 3}, {2, 3}, {3, 3}, {5, 4}, {6, 4}, {7, 3}} {
		a.add(t, c.id, c.epoch)
	}
	s := NewStore(a, 2)
	list, err := s.List(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Newest(ctx, a, list, "wc", 0, 0, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.CheckpointID != 6 || c.Metadata.Epoch != 4 {
		t.Fatalf("--from latest restores checkpoint %d of epoch %d; want 6 of epoch 4 (the zombie's 7 of epoch 3 landed late)", c.Metadata.CheckpointID, c.Metadata.Epoch)
	}
	s.Adopt(ctx, c, list, 0, hclog.NewNullLogger())
	var retained []int64
	for _, r := range s.Retained() {
		retained = append(retained, r.Metadata.CheckpointID)
	}
	if !slices.Equal(retained, []int64{5, 6}) || s.Latest().Metadata.CheckpointID != 6 {
		t.Fatalf("retained %v (latest %d); want [5 6], the successor's, with 6 the latest", retained, s.Latest().Metadata.CheckpointID)
	}
	if want := []string{"/ck/wc/chk-1", "/ck/wc/chk-2", "/ck/wc/chk-3", "/ck/wc/chk-7"}; !slices.Equal(a.disposed, want) {
		t.Fatalf("retention disposed of %v; want %v (the zombie's 7 ranks below 5 and 6)", a.disposed, want)
	}
	if id := s.NextID(); id != 8 {
		t.Fatalf("next id %d; want 8: the zombie's 7 was observed", id)
	}

	old := &epochAccess{}
	for _, id := range []int64{1, 2, 3} {
		old.add(t, id, 0)
	}
	c, err = Newest(ctx, old, old.list, "wc", 0, 0, nil)
	if err != nil || c.Metadata.CheckpointID != 3 {
		t.Fatalf("--from latest over metadata without epochs: %s, %v; want checkpoint 3", pointerOf(c), err)
	}
}

// TestNewestFallsBackWithinTheOrder: when the successor's newest checkpoint is damaged,
// --from latest tries its previous one before the zombie's late one, and the zombie's
// only when the successor has none left intact.
func TestNewestFallsBackWithinTheOrder(t *testing.T) {
	ctx := context.Background()
	a := &epochAccess{}
	for _, c := range []struct{ id, epoch int64 }{{3, 3}, {5, 4}, {6, 4}, {7, 3}} {
		a.add(t, c.id, c.epoch)
	}
	damage := func(id int64) {
		for i := range a.list {
			if a.list[i].CheckpointID == id {
				a.list[i].Metadata.Inline = bytes.Clone(a.list[i].Metadata.Inline[:10])
			}
		}
	}
	damage(6)
	c, err := Newest(ctx, a, a.list, "wc", 0, 0, nil)
	if err != nil || c.Metadata.CheckpointID != 5 {
		t.Fatalf("newest of epoch 4 damaged: %s, %v; want checkpoint 5 of epoch 4", pointerOf(c), err)
	}
	damage(5)
	c, err = Newest(ctx, a, a.list, "wc", 0, 0, nil)
	if err != nil || c.Metadata.CheckpointID != 7 {
		t.Fatalf("every checkpoint of epoch 4 damaged: %s, %v; want checkpoint 7 of epoch 3", pointerOf(c), err)
	}
}

// pointerOf returns the pointer of c, or "none".
func pointerOf(c *Completed) string {
	if c == nil {
		return "none"
	}
	return c.Location.ExternalPointer
}

package checkpoint

import (
	"context"
	"fmt"

	"github.com/flowstate/flowstate/sdk"
)

// cleanLeftovers deletes the job's shared state streams that no completed
// checkpoint of the job in the storage references, nor restored (the checkpoint the run
// starts from, perhaps another job's): the uploads of checkpoints a crash interrupted.
// Storages that cannot list their shared state (no sdk.SharedStateLister) are left alone.
// It reads the metadata of every completed checkpoint first and deletes nothing when one
// does not read back, since its references are then unknown. It returns how many streams
// it deleted.
func cleanLeftovers(ctx context.Context, access sdk.CheckpointStorageAccess, restored *Metadata) (int, error) {
	lister, ok := access.(sdk.SharedStateLister)
	if !ok {
		return 0, nil
	}
	listed, err := lister.ListSharedState(ctx)
	if err != nil {
		return 0, fmt.Errorf("list shared state: %w", err)
	}
	if len(listed) == 0 {
		return 0, nil
	}
	completed, err := access.ListCompletedCheckpoints(ctx)
	if err != nil {
		return 0, fmt.Errorf("list completed checkpoints: %w", err)
	}
	own := map[string]bool{} // what the job's completed checkpoints reference
	for _, loc := range completed {
		m, err := Load(ctx, access, loc)
		if err != nil {
			return 0, fmt.Errorf("keeping every shared stream: the references of checkpoint %s are unknown: %w", loc.ExternalPointer, err)
		}
		for ref := range SharedRefs(m) {
			own[ref] = true
		}
	}
	restoredRefs := map[string]bool{} // a savepoint or another job's checkpoint may be in use
	if restored != nil {
		restoredRefs = SharedRefs(restored)
	}
	var discard []sdk.StreamStateHandle
	matched := 0
	for _, h := range listed {
		switch {
		case own[h.Ref]:
			matched++
		case h.Ref != "" && !restoredRefs[h.Ref]:
			discard = append(discard, h)
		}
	}
	if len(own) > 0 && matched == 0 {
		// The listing and the handles name streams differently: deleting would be blind.
		return 0, fmt.Errorf("keeping every shared stream: none of the %d listed matches the %d shared streams the completed checkpoints reference", len(listed), len(own))
	}
	if len(discard) == 0 {
		return 0, nil
	}
	if err := access.DiscardState(ctx, discard); err != nil {
		return 0, fmt.Errorf("discard %d shared streams no completed checkpoint references: %w", len(discard), err)
	}
	return len(discard), nil
}

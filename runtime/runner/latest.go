package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
)

// LatestCheckpoint returns the checkpoint `runner run --from latest` restores: the newest
// of job's completed checkpoints in access whose metadata and state read back intact. It
// logs a warning on log naming each damaged checkpoint it skips, and reads each one within
// timeout (0: no bound). The offline commands resolve "latest" through it, so that they
// read the checkpoint a run would restore.
func LatestCheckpoint(ctx context.Context, access sdk.CheckpointStorageAccess, job string, timeout time.Duration, log hclog.Logger) (*checkpoint.Completed, error) {
	list, err := access.ListCompletedCheckpoints(ctx)
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of job %q: %w", job, err)
	}
	return checkpoint.Newest(ctx, access, list, job, timeout, timeout, log)
}

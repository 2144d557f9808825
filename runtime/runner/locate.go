package runner

import (
	"context"
	"fmt"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/pluginhost"
)

// JobLease reads the lease record of job as its configuration places it (ownership.Locate):
// it starts and configures the job's checkpoint storage plugin in host, opens the job's
// access of it, and looks there, else in the job's output directory (cfg.Job.Output). An
// error wraps ownership.ErrNoLease when there is no record.
func JobLease(ctx context.Context, cfg *config.Config, host *pluginhost.Host, job string) (ownership.Record, string, error) {
	in, err := host.Open(ctx, cfg.CheckpointStorage)
	if err != nil {
		return ownership.Record{}, "", fmt.Errorf("checkpoint storage %q: %w", cfg.CheckpointStorage, err)
	}
	if err := in.Configure(ctx, cfg.StorageOptions); err != nil {
		return ownership.Record{}, "", fmt.Errorf("configure %s: %w", in.Name(), err)
	}
	storage, _ := in.CheckpointStorage()
	access, err := storage.CreateCheckpointStorage(ctx, job)
	if err != nil {
		return ownership.Record{}, "", fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), job, err)
	}
	defer access.Close()
	return ownership.Locate(ctx, job, in.Name(), cfg.Checkpointing.Dir, access, cfg.Job.Output)
}

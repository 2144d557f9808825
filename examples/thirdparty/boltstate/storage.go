package boltstate

import (
	"context"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/dirstorage"
)

// File names of the bbolt files that hold a job's directory and a savepoint directory.
const (
	jobFileName       = "checkpoints.db"
	savepointFileName = "savepoint.db"
)

// storage returns the checkpoint storage of the current configuration: sdk/dirstorage over
// boltFS, which gives Flink's layout, atomic publication of _metadata, inline state,
// leftover cleanup, the path checks, shared-state listing and, through boltFS, the lease.
// Checkpoints survive crashes of the runner and the plugin, not the loss of this machine.
func (p *Plugin) storage() *dirstorage.Storage {
	cfg := p.config().storage
	cfg.Name, cfg.HighlyAvailable = Name, false
	return dirstorage.New(boltFS{root: cfg.Dir}, cfg)
}

// ResolveCheckpoint resolves <dir>/<job>/chk-N, a savepoint directory or its _metadata
// (paths or file:// URIs). Nothing complete there is an error wrapping sdk.ErrNotFound.
func (p *Plugin) ResolveCheckpoint(ctx context.Context, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	return p.storage().ResolveCheckpoint(ctx, pointer)
}

// CreateCheckpointStorage returns the storage of job's checkpoints, in
// <dir>/<job>/checkpoints.db. It needs a checkpoint directory (execution.checkpointing.dir).
func (p *Plugin) CreateCheckpointStorage(ctx context.Context, job string) (sdk.CheckpointStorageAccess, error) {
	return p.storage().CreateCheckpointStorage(ctx, job)
}

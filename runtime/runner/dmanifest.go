package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/session"
	"github.com/flowstate/flowstate/sdk"
)

// A savepoint of a distributed job is a savepoint of every task, each in the job's
// savepoint directory, and one manifest pointing at them: a savepoint of the job itself
// whose metadata lists its tasks' pointers (checkpoint.Metadata.Tasks). `runner run
// --from MANIFEST` in distributed mode restores each task from its own.

// manifestStorage returns the configured checkpoint storage plugin (shared with the
// tasks' sessions, configured as they configure it) and its access of the job itself,
// without initializing the job's base locations: the manifests of a job are its
// savepoints, never its checkpoints.
func manifestStorage(ctx context.Context, cfg *config.Config, host *pluginhost.Host, job string) (sdk.CheckpointStorage, sdk.CheckpointStorageAccess, error) {
	name := cfg.CheckpointStorage
	in, err := host.Open(ctx, name)
	if err == nil && !in.Alive() {
		_, err = in.Revive(ctx)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint storage %s: %w", name, err)
	}
	if err := in.Configure(ctx, session.PluginOptions(cfg, name)); err != nil {
		return nil, nil, fmt.Errorf("configure checkpoint storage %s: %w", name, err)
	}
	storage, ok := in.CheckpointStorage()
	if !ok {
		return nil, nil, fmt.Errorf("%s: plugin %s is not a checkpoint storage", config.KeyCheckpointStorage, name)
	}
	access, err := storage.CreateCheckpointStorage(ctx, job)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint storage %s: job %q: %w", name, job, err)
	}
	return storage, access, nil
}

// writeManifest writes the manifest of the savepoints of every task (pointers, by task)
// into target ("": the savepoint directory), and returns its pointer. The member writes it
// as the holder of the job's first task, whose lease fences the write.
func (m *member) writeManifest(target string, pointers map[string]string) (string, error) {
	job := m.topo.Job()
	lease, ok := m.g.Lease(m.g.Tasks()[0])
	if !ok {
		return "", fmt.Errorf("this runner no longer holds task %s, whose holder writes the manifest", m.g.Tasks()[0])
	}
	ctx, cancel := context.WithTimeout(m.runCtx, m.cfg.Checkpointing.Timeout) // not a turn's (step): the storage may be slow
	defer cancel()
	_, access, err := manifestStorage(ctx, m.cfg, m.d.Host, job.Name)
	if err != nil {
		return "", err
	}
	now := time.Now().UTC()
	id := now.UnixMilli()
	loc, err := access.InitializeLocationForSavepoint(ctx, id, target)
	if err != nil {
		return "", fmt.Errorf("the manifest of the savepoint of job %q: %w", job.Name, err)
	}
	md := &checkpoint.Metadata{Version: checkpoint.MetadataVersion, JobID: job.Name, CheckpointID: id, Savepoint: true, Time: now,
		Backend: m.cfg.StateBackend, MaxParallelism: job.MaxParallelism, JobType: job.Type, Tasks: pointers, Epoch: lease.Record().Epoch}
	if err := lease.Check(); err != nil {
		loc.DisposeOnFailure(ctx)
		return "", fmt.Errorf("the manifest of the savepoint of job %q: %w", job.Name, err)
	}
	done, err := checkpoint.Publish(ctx, loc, md)
	if err != nil {
		loc.DisposeOnFailure(ctx)
		return "", fmt.Errorf("the manifest of the savepoint of job %q: %w", job.Name, err)
	}
	return done.ExternalPointer, nil
}

// readManifest resolves pointer and returns the savepoints of the tasks it lists; a
// pointer that is no manifest of job (a checkpoint, a savepoint of one runner's job) is
// refused by name.
func readManifest(ctx context.Context, cfg *config.Config, host *pluginhost.Host, job, pointer string) (map[string]string, error) {
	storage, access, err := manifestStorage(ctx, cfg, host, job)
	if err != nil {
		return nil, err
	}
	c, err := checkpoint.Resolve(ctx, storage, access, pointer, false, time.Minute)
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", pointer, err)
	}
	m := c.Metadata
	switch {
	case len(m.Tasks) == 0:
		return nil, fmt.Errorf("--from %s: a checkpoint or savepoint of job %q as one runner ran it, not the manifest of a savepoint of a distributed job (runner savepoint in distributed mode writes those)", pointer, m.JobID)
	case m.JobID != job:
		return nil, fmt.Errorf("--from %s: the manifest of a savepoint of job %q, not of job %q", pointer, m.JobID, job)
	}
	return m.Tasks, nil
}

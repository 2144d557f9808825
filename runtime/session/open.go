package session

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/restart"
	"github.com/flowstate/flowstate/sdk/host"
)

// Open starts the backend and storage plugins, restarting any whose process died since an
// earlier call, configures them and creates the job's storage access (Ensure): a new
// access on every call, as every start of a run gets one. A plugin that cannot be what
// the configuration asks (no such plugin, a binary that fails its checks, not a plugin,
// the wrong kind) is a permanent error; one that died on the way is not: starting it
// again may work.
func (s *Session) Open(ctx context.Context) error {
	cfg := s.opts.Config
	// The storage starts beside the backend: a start is mostly a process coming up, which
	// the other's need not wait for.
	names := []string{cfg.StateBackend}
	if cfg.CheckpointStorage != cfg.StateBackend {
		names = append(names, cfg.CheckpointStorage)
	}
	ins, errs := make([]*pluginhost.Instance, len(names)), make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { ins[i], errs[i] = s.start(ctx, name) })
	}
	wg.Wait()
	backend, err := ins[0], errs[0]
	if err != nil {
		return fmt.Errorf("state backend %q (state.backend.type): %w", cfg.StateBackend, err)
	}
	if _, ok := backend.StateBackend(); !ok {
		return restart.Permanent(fmt.Errorf("state.backend.type: plugin %q is not a state backend (it serves %v)", cfg.StateBackend, backend.Info().Kinds))
	}
	s.backend, s.storage = backend, backend
	if len(names) == 2 {
		if s.storage, err = ins[1], errs[1]; err != nil {
			return fmt.Errorf("checkpoint storage %q (execution.checkpointing.storage): %w", cfg.CheckpointStorage, err)
		}
	}
	if _, ok := s.storage.CheckpointStorage(); !ok {
		return restart.Permanent(fmt.Errorf("execution.checkpointing.storage: plugin %q is not a checkpoint storage (it serves %v)", cfg.CheckpointStorage, s.storage.Info().Kinds))
	}
	s.access = nil
	_, err = s.Ensure(ctx)
	return err
}

// start returns plugin name's running instance, starting it, or starting it again if its
// process died. Only a start-up the plugin did not survive (host.ErrExited) is worth
// another try; any other start-up error is permanent.
func (s *Session) start(ctx context.Context, name string) (*pluginhost.Instance, error) {
	in, err := s.opts.Host.Open(ctx, name)
	if err == nil && !in.Alive() {
		_, err = in.Revive(ctx)
	}
	if err != nil && !errors.Is(err, host.ErrExited) && ctx.Err() == nil {
		return nil, restart.Permanent(err)
	}
	return in, err
}

package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/sdk"
)

// Ensure brings the plugins back to where an attempt can use them: it restarts those whose
// process died, configures those started since they last took their options, and
// creates a storage access of the storage plugin's current process when the one it had
// belongs to an earlier process (renewed then reports true). A plugin that fails to
// start, handshake or take its options is an ordinary failure: the restart strategy
// decides whether to try again, and the next call picks up where this one stopped.
func (s *Session) Ensure(ctx context.Context) (renewed bool, err error) {
	for _, in := range s.Plugins() {
		if !in.Alive() {
			s.log.Warn("restarting plugin", "plugin", in.Name())
			if err := in.Restart(ctx); err != nil {
				return false, fmt.Errorf("restart plugin %s: %w", in.Name(), err)
			}
			if s.opts.OnRestart != nil {
				s.opts.OnRestart(in.Name(), in.Pid())
			}
		}
		if gen := in.Generation(); s.configured[in] != gen {
			if err := s.configure(ctx, in); err != nil {
				return false, err
			}
			s.configured[in] = gen
		}
	}
	if gen := s.storage.Generation(); s.access == nil || s.accessGen != gen {
		if err := s.newAccess(ctx); err != nil {
			return false, err
		}
		s.accessGen = gen
		return true, nil
	}
	return false, nil
}

// configure gives plugin in its options, within CallTimeout. An option the plugin refuses
// is a permanent error naming where the configuration set it.
func (s *Session) configure(ctx context.Context, in *pluginhost.Instance) error {
	ctx, cancel := context.WithTimeout(ctx, s.CallTimeout())
	defer cancel()
	err := in.Configure(ctx, s.options(in))
	if err == nil {
		return nil
	}
	var oe *sdk.OptionError
	if errors.As(err, &oe) {
		cfg := s.opts.Config
		key := cfg.OptionKey(in.Name(), oe.Option)
		return dataflow.Permanent(fmt.Errorf("%s: plugin %s refused option %q (value %q): %w", cfg.Locate(key), in.Name(), oe.Option, oe.Value, oe.Err))
	}
	return fmt.Errorf("configure plugin %s: %w", in.Name(), err)
}

// options returns the options of plugin in: a plugin serving both roles gets both sets.
func (s *Session) options(in *pluginhost.Instance) sdk.Options {
	cfg := s.opts.Config
	switch {
	case s.backend == s.storage:
		opts := sdk.Options{}
		for k, v := range cfg.StorageOptions {
			opts[k] = v
		}
		for k, v := range cfg.BackendOptions {
			opts[k] = v
		}
		return opts
	case in == s.backend:
		return cfg.BackendOptions
	}
	return cfg.StorageOptions
}

// newAccess creates the job's storage access of the storage plugin's current process,
// within CallTimeout: the storage's, behind the job's ownership (ownership.Owner.Guard,
// which takes the storage's lease the first time), with its base locations initialized.
func (s *Session) newAccess(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.CallTimeout())
	defer cancel()
	in, job := s.storage, s.opts.Job
	access, err := s.Storage().CreateCheckpointStorage(ctx, job)
	if err != nil {
		err = fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), job, err)
		if errors.Is(err, sdk.ErrInvalidArgument) { // the storage refused the job's id
			err = dataflow.Permanent(err)
		}
		return err
	}
	if access, err = s.opts.Owner.Guard(ctx, in.Name(), s.opts.Config.Checkpointing.Dir, access); err != nil {
		return err
	}
	if err := access.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		return fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), job, err)
	}
	s.access = access
	return nil
}

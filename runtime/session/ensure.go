package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/restart"
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
		if err := s.bringBack(ctx, in); err != nil {
			return false, err
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

// bringBack restarts plugin in if its process died, and gives it its options, within
// CallTimeout, if it was started since it last took them. An option the plugin refuses is
// a permanent error naming where the configuration set it.
func (s *Session) bringBack(ctx context.Context, in *pluginhost.Instance) error {
	if !in.Alive() {
		s.log.Warn("restarting plugin", "plugin", in.Name())
		restarted, err := in.Revive(ctx)
		if err != nil {
			return fmt.Errorf("restart plugin %s: %w", in.Name(), err)
		}
		if restarted && s.opts.OnRestart != nil {
			s.opts.OnRestart(in.Name(), in.Pid())
		}
	}
	gen := in.Generation()
	if s.configured[in] == gen {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.CallTimeout())
	defer cancel()
	err := in.Configure(cctx, s.options(in))
	var oe *sdk.OptionError
	switch {
	case err == nil:
		s.configured[in] = gen
		return nil
	case errors.As(err, &oe):
		cfg := s.opts.Config
		key := cfg.OptionKey(in.Name(), oe.Option)
		return restart.Permanent(fmt.Errorf("%s: plugin %s refused option %q (value %q): %w", cfg.Locate(key), in.Name(), oe.Option, oe.Value, oe.Err))
	}
	return fmt.Errorf("configure plugin %s: %w", in.Name(), err)
}

// options returns the options of plugin in (PluginOptions).
func (s *Session) options(in *pluginhost.Instance) sdk.Options {
	return PluginOptions(s.opts.Config, in.Name())
}

// PluginOptions returns the options cfg gives plugin: the state backend's, the checkpoint
// storage's, or both sets for a plugin serving both roles. Whatever configures a plugin
// the runner's sessions share passes these, so that it is configured once.
func PluginOptions(cfg *config.Config, plugin string) sdk.Options {
	switch {
	case cfg.StateBackend == cfg.CheckpointStorage:
		opts := sdk.Options{}
		for k, v := range cfg.StorageOptions {
			opts[k] = v
		}
		for k, v := range cfg.BackendOptions {
			opts[k] = v
		}
		return opts
	case plugin == cfg.StateBackend:
		return cfg.BackendOptions
	}
	return cfg.StorageOptions
}

package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// Instance is one plugin, running in its own process or (a builtin) in the runner's.
type Instance struct {
	name      string
	path      string // binary; empty for a builtin
	sha256    string
	pinnedIn  string
	builtin   func() sdk.Plugin
	logger    hclog.Logger
	heartbeat heartbeat
	observer  host.CallObserver // sees the calls into every process of the plugin

	mu         sync.Mutex
	proc       *host.Plugin // process of a binary
	impl       sdk.Plugin   // value of a builtin
	killed     chan struct{}
	stopBeats  func() // stops the heartbeats of proc
	killReason string // why the runner killed proc, for ExitError
	generation int    // how many times the plugin was started

	// once serializes Revive and Configure, and configured is the generation whose
	// process took options (configuredOpts): callers that share the plugin (the tasks of
	// a distributed job) start and configure it once.
	once           sync.Mutex
	configured     int
	configuredOpts sdk.Options
}

func (in *Instance) start(ctx context.Context) error {
	if in.builtin != nil {
		impl := in.builtin()
		if impl == nil {
			return fmt.Errorf("plugin %s: the builtin returned no plugin", in.name)
		}
		in.impl = impl
		in.killed = make(chan struct{})
		in.generation++
		return nil
	}
	p, err := host.Start(ctx, host.Config{Path: in.path, SHA256: in.sha256, Logger: in.logger, Observer: in.observer})
	if err != nil {
		if errors.Is(err, host.ErrChecksumMismatch) && in.pinnedIn != "" {
			return fmt.Errorf("%w (pinned in %s; if the new binary is intended, run `runner plugins lock` again)", err, in.pinnedIn)
		}
		return err
	}
	if got := p.Info().Name; got != in.name {
		in.logger.Warn("plugin reports another name than its file", "plugin", in.name, "reported", got, "path", in.path)
	}
	in.proc, in.killReason = p, ""
	in.stopBeats = in.heartbeat.start(in, p)
	in.generation++
	return nil
}

// Generation counts the starts of the plugin: 1 after the first, one more after each
// Restart. Whatever was obtained from the plugin (its configuration, accesses, keyed
// backends) belongs to the generation it was obtained in.
func (in *Instance) Generation() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.generation
}

// Name returns the plugin's name, as in flowstate-plugin-NAME.
func (in *Instance) Name() string { return in.name }

// Info describes the plugin; Path is empty and Protocol is host.ProtocolVersion for a
// builtin.
func (in *Instance) Info() host.Info {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.proc != nil {
		return in.proc.Info()
	}
	pi := in.impl.PluginInfo()
	return host.Info{Name: pi.Name, Version: pi.Version, Kinds: host.KindsOf(in.impl), Protocol: host.ProtocolVersion}
}

// Configure passes the plugin its options, once per process: when its current process
// already took the same options it returns at once, so that callers sharing the plugin
// (the tasks of a distributed job) configure it once, never while another call uses it.
func (in *Instance) Configure(ctx context.Context, opts sdk.Options) error {
	in.once.Lock()
	defer in.once.Unlock()
	in.mu.Lock()
	proc, impl, gen := in.proc, in.impl, in.generation
	in.mu.Unlock()
	if in.configured == gen && maps.Equal(in.configuredOpts, opts) {
		return nil
	}
	var err error
	if proc != nil {
		err = proc.Configure(ctx, opts)
	} else {
		err = impl.Configure(ctx, opts)
	}
	if err == nil {
		in.configured, in.configuredOpts = gen, maps.Clone(opts)
	}
	return err
}

// Revive starts the plugin again if its process has exited, and reports whether this
// call did: of callers that find it dead at once, one restarts it and the others find
// the new process.
func (in *Instance) Revive(ctx context.Context) (bool, error) {
	in.once.Lock()
	defer in.once.Unlock()
	if in.Alive() {
		return false, nil
	}
	return true, in.Restart(ctx)
}

// StateBackend returns the plugin's state backend, if it is one.
func (in *Instance) StateBackend() (sdk.StateBackend, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.proc != nil {
		return in.proc.StateBackend()
	}
	sb, ok := in.impl.(sdk.StateBackend)
	return sb, ok
}

// CheckpointStorage returns the plugin's checkpoint storage, if it is one.
func (in *Instance) CheckpointStorage() (sdk.CheckpointStorage, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.proc != nil {
		return in.proc.CheckpointStorage()
	}
	cs, ok := in.impl.(sdk.CheckpointStorage)
	return cs, ok
}

// Done is closed when the plugin's current process exits (for a builtin: when it is
// killed). After Restart, call Done again for the new process.
func (in *Instance) Done() <-chan struct{} {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.proc != nil {
		return in.proc.Done()
	}
	return in.killed
}

// Alive reports whether the plugin's process is running.
func (in *Instance) Alive() bool {
	in.mu.Lock()
	none := in.proc == nil && in.impl == nil // a Restart whose start failed
	in.mu.Unlock()
	if none {
		return false
	}
	select {
	case <-in.Done():
		return false
	default:
		return true
	}
}

// ExitError says how the plugin's process ended (exit status and last stderr lines); nil
// while it runs and for a builtin.
func (in *Instance) ExitError() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.proc == nil {
		return nil
	}
	err := in.proc.ExitError()
	if err != nil && in.killReason != "" {
		return fmt.Errorf("killed by the runner: %s: %w", in.killReason, err)
	}
	return err
}

// Pid returns the plugin's process id, 0 for a builtin.
func (in *Instance) Pid() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.proc == nil {
		return 0
	}
	return in.proc.Pid()
}

// Restart kills the plugin's process if it still runs and starts a new one (a builtin
// gets a fresh value). Everything obtained from the old one is gone: the caller
// configures the plugin again and recreates its backends and accesses.
func (in *Instance) Restart(ctx context.Context) error {
	in.Kill()
	in.mu.Lock()
	defer in.mu.Unlock()
	in.proc, in.impl = nil, nil
	if err := in.start(ctx); err != nil {
		return fmt.Errorf("restarting plugin %s: %w", in.name, err)
	}
	return nil
}

// Kill stops the plugin's process and returns once it is gone: the process gets
// host.KillGrace to exit when asked, then SIGKILL.
func (in *Instance) Kill() {
	in.mu.Lock()
	proc, killed, stop := in.proc, in.killed, in.stopBeats
	in.mu.Unlock()
	if proc != nil {
		stop()
		proc.Kill()
		return
	}
	if killed != nil {
		select {
		case <-killed:
		default:
			close(killed)
		}
	}
}

// killNow sends SIGKILL to the plugin's process at once, recording why, and returns its
// pid once it is gone; 0 when there was no running process (or for a builtin).
func (in *Instance) killNow(reason string) int {
	in.mu.Lock()
	proc, stop := in.proc, in.stopBeats
	if proc == nil || proc.Exited() {
		in.mu.Unlock()
		return 0
	}
	in.killReason = reason
	in.mu.Unlock()
	stop()
	proc.KillNow()
	return proc.Pid()
}

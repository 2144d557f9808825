// Package session owns a run's plugin session: the processes of the job's state backend and
// checkpoint storage plugins from the moment they are opened until the run ends. A
// Session opens them (Open), brings them back after a failure (Ensure: restarts a plugin
// whose process died, configures every plugin started since it last took its options,
// and replaces the storage access of a dead process), hands out what an attempt uses
// (Backend, Access, Storage), watches the processes while an attempt runs (Watch: a
// process that exits, or that pluginhost killed because it missed its heartbeats, ends
// the attempt) and kills the plugin that keeps a cancelled attempt from ending
// (KillStuck). Every storage access it creates goes through the run's ownership.Owner
// (Guard) before anything uses it.
//
// It must never import the engine (runtime/dataflow), the checkpoint store
// (runtime/checkpoint), the monitor (runtime/monitor) or the runner (runtime/runner), as
// internal/deps checks: the runner hands it a configuration, a plugin host and an owner,
// and is told of restarts through Options.OnRestart. It marks what restarting cannot fix
// with runtime/restart's Permanent, which stands below the engine and the runner alike.
package session

import (
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/sdk"
)

// Options configure a Session.
type Options struct {
	// Config is the resolved configuration: which plugins, their options, the checkpoint
	// directory and task.cancellation.timeout.
	Config *config.Config
	// Host starts and restarts the plugins.
	Host *pluginhost.Host
	// Owner guards every storage access the session creates.
	Owner *ownership.Owner
	// Job is the job's name, the id of its storage access.
	Job string
	// Logger receives the session's log; nil discards it.
	Logger hclog.Logger
	// OnRestart, if set, is told of every plugin Ensure restarted, with its new pid.
	OnRestart func(name string, pid int)
}

// Session is one run's plugin session (see the package's doc). Its methods are called from
// one goroutine at a time, except Watch's and KillStuck's, which an attempt calls while it
// runs.
type Session struct {
	opts Options
	log  hclog.Logger

	backend, storage *pluginhost.Instance // the same instance when one plugin serves both
	// configured is the generation (pluginhost.Instance.Generation) in which each plugin
	// last took its options, and accessGen the storage plugin's generation access belongs
	// to: a plugin restarted since must be configured again, and an access of a dead
	// process replaced, whichever call restarted it.
	configured map[*pluginhost.Instance]int
	access     sdk.CheckpointStorageAccess
	accessGen  int
}

// New returns the session of one run; Open starts its plugins.
func New(opts Options) *Session {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &Session{opts: opts, log: log, configured: map[*pluginhost.Instance]int{}}
}

// Backend returns the state backend of the open session.
func (s *Session) Backend() sdk.StateBackend {
	b, _ := s.backend.StateBackend()
	return b
}

// Storage returns the checkpoint storage of the open session.
func (s *Session) Storage() sdk.CheckpointStorage {
	st, _ := s.storage.CheckpointStorage()
	return st
}

// StorageName is the name of the checkpoint storage plugin.
func (s *Session) StorageName() string { return s.opts.Config.CheckpointStorage }

// Access returns the job's storage access of the storage plugin's current process,
// behind the job's ownership: the one Open or the last Ensure created.
func (s *Session) Access() sdk.CheckpointStorageAccess { return s.access }

// Plugins returns the session's plugin instances: the state backend's, then the checkpoint
// storage's unless the same plugin serves both.
func (s *Session) Plugins() []*pluginhost.Instance {
	if s.storage == s.backend {
		return []*pluginhost.Instance{s.backend}
	}
	return []*pluginhost.Instance{s.backend, s.storage}
}

// CallTimeout bounds each call the session, and recovery, make into a plugin outside an
// attempt (configuring, listing, resolving, reading metadata, disposing):
// task.cancellation.timeout, or 30 s when that is off. A plugin that does not answer within
// it fails the call, which the restart strategy retries.
func (s *Session) CallTimeout() time.Duration {
	if t := s.opts.Config.Restart.CancellationTimeout; t > 0 {
		return t
	}
	return 30 * time.Second
}

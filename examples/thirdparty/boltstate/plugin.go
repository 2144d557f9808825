// Package boltstate is a third-party Flowstate plugin over bbolt (go.etcd.io/bbolt), an
// embedded B+tree key/value store. One value serves both kinds:
//
//   - State backend: each keyed backend keeps its working state in a bbolt file of its own
//     under the local directory (option "localdir"). Working files are not durable (they
//     are written without fsync and deleted on Close); durability comes from checkpoints.
//     Snapshot opens a read-only bbolt transaction, a consistent view that later writes do
//     not change, and Snapshot.Write streams it in the canonical format
//     (sdk.FormatCanonical), so checkpoints and savepoints restore into any backend.
//   - Checkpoint storage: sdk/dirstorage over boltFS, a file system in bbolt files. A
//     job's directory <dir>/<job> (chk-N/, shared/, where dir is
//     execution.checkpointing.dir) lives in one bbolt file, <dir>/<job>/checkpoints.db,
//     each file a bucket of chunks under its path; a checkpoint's _metadata appears by a
//     rename in one fsynced transaction, so a checkpoint is either complete and
//     resolvable or not there at all. Its external pointer is <dir>/<job>/chk-N. A
//     savepoint is a directory savepoint-<job>-<random> under the target, holding a
//     savepoint.db file of its own. The job's lease record is the file <dir>/<job>/_lease
//     (sdk/filelease).
//
// Selected as state.backend.type with no checkpoint storage configured, the runner uses the
// plugin as its checkpoint storage too, as FLIP-142 promises for external state backends.
//
// It imports only the SDK's contract and helpers (sdk, sdk/dirstorage, sdk/filelease,
// sdk/kvstream, sdk/layout) and bbolt: never the SDK's server or host end, nor anything
// of this repository outside the SDK module.
package boltstate

import (
	"context"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// Name is the plugin's name, as users write it in the configuration file.
const Name = "boltdb"

// Version is the plugin's version.
const Version = "0.1.0"

// Plugin is the boltdb state backend and checkpoint storage.
type Plugin struct {
	mu  sync.Mutex
	cfg config
}

var (
	_ sdk.StateBackend      = (*Plugin)(nil)
	_ sdk.CheckpointStorage = (*Plugin)(nil)
)

// New returns an unconfigured plugin; Configure sets its options.
func New() *Plugin { return &Plugin{cfg: defaultConfig()} }

// PluginInfo returns the plugin's name and version.
func (p *Plugin) PluginInfo() sdk.PluginInfo { return sdk.PluginInfo{Name: Name, Version: Version} }

// Configure checks and applies the options (see the package's README for the list). An
// unknown or invalid option is an *sdk.OptionError naming it.
func (p *Plugin) Configure(ctx context.Context, opts sdk.Options) error {
	cfg, err := parseOptions(opts)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.cfg = cfg
	p.mu.Unlock()
	return nil
}

// config returns the current configuration.
func (p *Plugin) config() config {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

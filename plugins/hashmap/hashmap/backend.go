// Package hashmap is the hashmap state backend: it keeps each keyed backend's state as Go
// maps in the plugin's heap and takes full snapshots in the canonical format
// (sdk.FormatCanonical), like Flink's HashMapStateBackend.
//
// Snapshots are copy-on-write at key granularity. Each keyed backend's state is split into
// shards (about 256, grouped by key group so that scans within a key group look at few
// shards). Snapshot only registers the snapshot with every shard, in microseconds whatever
// the state's size. Until the asynchronous Snapshot.Write has serialized a shard, a write to
// it first saves the previous value of the key it changes in the snapshot's undo log; the
// snapshot's view is the live map overlaid with that log. Snapshot.Write serializes one
// shard at a time under its lock into memory and hands the bytes to the stream after
// unlocking, so processing goes on during the upload. Several snapshots may be pending at
// once.
//
// It owns the backend's keyed state, its copy-on-write snapshots and its restores. As
// every plugin it imports only the SDK (sdk, sdk/kvstream), never the runtime, another
// plugin, or the SDK's plugin or host end (sdk/server, sdk/host); its main package links
// sdk/server.
package hashmap

import (
	"context"
	"fmt"
	"strconv"

	"github.com/flowstate/flowstate/sdk"
)

// Name is the plugin's name.
const Name = "hashmap"

// Version is the plugin's version.
const Version = "0.1.0"

// Backend is the hashmap state backend plugin.
type Backend struct{}

var _ sdk.StateBackend = (*Backend)(nil)

// New returns a hashmap state backend.
func New() *Backend { return &Backend{} }

// PluginInfo returns the plugin's name and version.
func (b *Backend) PluginInfo() sdk.PluginInfo { return sdk.PluginInfo{Name: Name, Version: Version} }

// OptionKeys returns every option Configure accepts: sdk.OptionIncremental.
func OptionKeys() []string { return []string{sdk.OptionIncremental} }

// Configure checks the options. The only option is sdk.OptionIncremental: hashmap takes full
// snapshots only, so "true" is accepted with a warning, as in Flink.
func (b *Backend) Configure(ctx context.Context, opts sdk.Options) error {
	if err := opts.CheckKnown(OptionKeys()...); err != nil {
		return err
	}
	if v, ok := opts[sdk.OptionIncremental]; ok {
		inc, err := strconv.ParseBool(v)
		if err != nil {
			return &sdk.OptionError{Option: sdk.OptionIncremental, Value: v, Err: fmt.Errorf("want true or false")}
		}
		if inc {
			sdk.Logger().Warn("the hashmap state backend does not support incremental checkpoints; it takes full snapshots", "option", sdk.OptionIncremental, "value", v)
		}
	}
	return nil
}

// CreateKeyedStateBackend returns an empty keyed backend for one operator subtask.
func (b *Backend) CreateKeyedStateBackend(ctx context.Context, p sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	if p.KeyGroups.Start < 0 || p.KeyGroups.End <= p.KeyGroups.Start {
		return nil, fmt.Errorf("hashmap: keyed backend for %s/%s subtask %d: invalid key group range %s: %w", p.JobID, p.OperatorID, p.Subtask, p.KeyGroups, sdk.ErrInvalidArgument)
	}
	return newKeyed(p), nil
}

// Package memstore is a small in-memory state backend and checkpoint storage for the
// tests of the plugin protocol. It is deliberately simple, with a few hooks that make
// errors and panics on demand: Get of PanicKey panics, Write of TooLargeKey fails with
// sdk.ErrStateTooLarge.
//
// It imports only the contract (package sdk), never the server or the host end.
package memstore

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/flowstate/flowstate/sdk"
)

// Hooks recognised in keys.
var (
	// PanicKey makes Get panic.
	PanicKey = []byte("\xff\xffpanic")
	// TooLargeKey makes Write fail with an error wrapping sdk.ErrStateTooLarge.
	TooLargeKey = []byte("\xff\xfftoo-large")
)

// Plugin is both a state backend and a checkpoint storage.
type Plugin struct {
	mu        sync.Mutex
	name      string
	opts      sdk.Options
	threshold int
	store     *store
}

// New returns a plugin named "mem".
func New() *Plugin { return &Plugin{name: "mem", store: newStore()} }

// PluginInfo implements sdk.Plugin.
func (p *Plugin) PluginInfo() sdk.PluginInfo { return sdk.PluginInfo{Name: p.name, Version: "0.1.0"} }

// Configure accepts "greeting" (anything), "data-inline-threshold" (bytes, an integer) and
// "savepoint-dir".
func (p *Plugin) Configure(_ context.Context, opts sdk.Options) error {
	if err := opts.CheckKnown("greeting", sdk.OptionDataInlineThreshold, sdk.OptionSavepointDir); err != nil {
		return err
	}
	threshold := 0
	if v, ok := opts[sdk.OptionDataInlineThreshold]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return &sdk.OptionError{Option: sdk.OptionDataInlineThreshold, Value: v, Err: fmt.Errorf("not a byte count: %w", sdk.ErrInvalidArgument)}
		}
		threshold = n
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opts, p.threshold = opts, threshold
	p.store.setThreshold(threshold)
	return nil
}

// CreateKeyedStateBackend implements sdk.StateBackend.
func (p *Plugin) CreateKeyedStateBackend(_ context.Context, params sdk.KeyedBackendParams) (sdk.KeyedStateBackend, error) {
	if params.KeyGroups.Start >= params.KeyGroups.End {
		return nil, fmt.Errorf("key groups %s are empty: %w", params.KeyGroups, sdk.ErrInvalidArgument)
	}
	return &keyed{params: params, data: map[string][]byte{}}, nil
}

// ResolveCheckpoint implements sdk.CheckpointStorage.
func (p *Plugin) ResolveCheckpoint(_ context.Context, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	return p.store.resolve(pointer)
}

// CreateCheckpointStorage implements sdk.CheckpointStorage.
func (p *Plugin) CreateCheckpointStorage(_ context.Context, jobID string) (sdk.CheckpointStorageAccess, error) {
	if jobID == "" {
		return nil, fmt.Errorf("empty job id: %w", sdk.ErrInvalidArgument)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return &access{s: p.store, job: jobID, savepointDir: p.opts[sdk.OptionSavepointDir]}, nil
}

// StorageOnly serves only the checkpoint storage of a Plugin.
type StorageOnly struct{ p *Plugin }

// NewStorageOnly returns a checkpoint storage named "memstorage".
func NewStorageOnly() *StorageOnly {
	return &StorageOnly{p: &Plugin{name: "memstorage", store: newStore()}}
}

// PluginInfo implements sdk.Plugin.
func (s *StorageOnly) PluginInfo() sdk.PluginInfo { return s.p.PluginInfo() }

// Configure implements sdk.Plugin.
func (s *StorageOnly) Configure(ctx context.Context, opts sdk.Options) error {
	return s.p.Configure(ctx, opts)
}

// ResolveCheckpoint implements sdk.CheckpointStorage.
func (s *StorageOnly) ResolveCheckpoint(ctx context.Context, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	return s.p.ResolveCheckpoint(ctx, pointer)
}

// CreateCheckpointStorage implements sdk.CheckpointStorage.
func (s *StorageOnly) CreateCheckpointStorage(ctx context.Context, jobID string) (sdk.CheckpointStorageAccess, error) {
	return s.p.CreateCheckpointStorage(ctx, jobID)
}

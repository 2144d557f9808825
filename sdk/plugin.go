package sdk

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Kind names a role a plugin can play.
type Kind string

const (
	// KindStateBackend is the role of a plugin implementing StateBackend.
	KindStateBackend Kind = "state-backend"
	// KindCheckpointStorage is the role of a plugin implementing CheckpointStorage.
	KindCheckpointStorage Kind = "checkpoint-storage"
)

// PluginInfo describes a plugin implementation.
type PluginInfo struct {
	// Name is the plugin's name as users write it in the configuration file, for example
	// "hashmap". It must match [a-z0-9][a-z0-9-]*.
	Name string
	// Version is the plugin's own version, for example "1.2.0".
	Version string
}

// CheckName reports whether i.Name is a valid plugin name: one or more of a-z, 0-9 and
// '-', not starting with '-'. The SDK's server refuses to serve a plugin with another
// name, and the runner refuses to look one up.
func (i PluginInfo) CheckName() error {
	ok := i.Name != "" && i.Name[0] != '-'
	for _, r := range i.Name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("plugin name %q must match [a-z0-9][a-z0-9-]*", i.Name)
	}
	return nil
}

// Plugin is what every plugin implements, whatever its kinds.
type Plugin interface {
	// PluginInfo returns the plugin's name and version.
	PluginInfo() PluginInfo
	// Configure validates and applies the plugin's options. The runner calls it before any
	// other call but PluginInfo, and again with the same options after restarting the
	// plugin's process. An invalid or unknown option is reported with an *OptionError
	// naming it.
	Configure(ctx context.Context, opts Options) error
}

// Options are a plugin's settings: string keys and values taken from the runner's
// configuration file. A backend plugin NAME receives the keys under state.backend.NAME.
// and a storage plugin NAME those under execution.checkpointing.NAME., with that prefix
// removed, plus the common options below when the user set them.
type Options map[string]string

// Common options the runner passes to plugins when the configuration sets them.
const (
	// OptionCheckpointDir is execution.checkpointing.dir, passed to checkpoint storages.
	OptionCheckpointDir = "dir"
	// OptionSavepointDir is execution.checkpointing.savepoint-dir, passed to checkpoint
	// storages.
	OptionSavepointDir = "savepoint-dir"
	// OptionDataInlineThreshold is execution.checkpointing.data-inline-threshold in bytes,
	// passed to checkpoint storages.
	OptionDataInlineThreshold = "data-inline-threshold"
	// OptionIncremental is execution.checkpointing.incremental ("true" or "false"), passed to
	// state backends.
	OptionIncremental = "incremental"
)

// CheckKnown returns an *OptionError for the first option (in sorted order) whose key is not
// in known.
func (o Options) CheckKnown(known ...string) error {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		found := false
		for _, kn := range known {
			if k == kn {
				found = true
				break
			}
		}
		if !found {
			return &OptionError{Option: k, Value: o[k], Err: fmt.Errorf("unknown option (known: %s)", strings.Join(known, ", "))}
		}
	}
	return nil
}

// OptionError reports an option that a plugin refused.
type OptionError struct {
	// Option is the option's key, as the plugin received it.
	Option string
	// Value is the value the plugin refused.
	Value string
	// Err says what is wrong with it.
	Err error
}

// Error implements error.
func (e *OptionError) Error() string {
	return fmt.Sprintf("option %q (value %q): %v", e.Option, e.Value, e.Err)
}

// Unwrap returns the underlying error.
func (e *OptionError) Unwrap() error { return e.Err }

// Errors a plugin returns, alone or wrapped with %w, so that the runner can tell them apart.
// They keep their identity across the plugin boundary.
var (
	// ErrNotFound: a checkpoint, pointer, handle or backend does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalidArgument: a request is malformed, for example a pointer outside the storage.
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrStateTooLarge: the state does not fit the storage's limits.
	ErrStateTooLarge = errors.New("state too large")
	// ErrUnsupported: the plugin cannot do what was asked, for example restore a format it
	// does not know.
	ErrUnsupported = errors.New("unsupported")
	// ErrCorrupt: stored bytes failed a consistency check.
	ErrCorrupt = errors.New("corrupt")
	// ErrConflict: a conditional write lost: the record it was to replace changed, or the
	// record it was to create exists. Only LeaseStore returns it so far.
	ErrConflict = errors.New("conflict")
)

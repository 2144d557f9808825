package config

import (
	"fmt"
	"slices"
	"sort"

	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/sdk"
)

// Resolve picks the checkpoint storage by Flink's loader rules and checks that the selected
// plugins exist and play the roles they are selected for:
//
//  1. the state backend is what code or the file selects (hashmap by default);
//  2. a configured storage is used; if the backend plugin also implements CheckpointStorage
//     a warning says that it is not used as the storage;
//  3. with none configured, a backend plugin that also implements CheckpointStorage serves
//     as the storage (StorageFromBackend), else fsstorage when a checkpoint dir is set, else
//     jmstorage.
//
// Built-in names resolve without calling kindsOf (runtime/builtins knows their kinds); other names call kindsOf, which launches
// the plugin and returns its kinds (kindsOf may be nil when only built-ins are expected).
// Errors name the key that selected the plugin and its line. Resolve may be called again
// after Apply.
func Resolve(c *Config, kindsOf func(plugin string) ([]sdk.Kind, error)) error {
	cache := map[string][]sdk.Kind{}
	kinds := func(name string) ([]sdk.Kind, error) {
		if p, ok := builtins.Lookup(name); ok {
			kinds := make([]sdk.Kind, len(p.Kinds))
			for i, k := range p.Kinds {
				kinds[i] = sdk.Kind(k)
			}
			return kinds, nil
		}
		if k, ok := cache[name]; ok {
			return k, nil
		}
		if kindsOf == nil {
			return nil, fmt.Errorf("%w %q: not a built-in plugin and no plugin launcher given", ErrUnknownPlugin, name)
		}
		k, err := kindsOf(name)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %w", ErrUnknownPlugin, name, err)
		}
		cache[name] = k
		return k, nil
	}
	var warnings []string
	backendKey := c.selectorKey(KeyStateBackend, c.backendSrc)
	bk, err := kinds(c.StateBackend)
	if err != nil {
		return c.errorAt(KeyStateBackend, backendKey, err)
	}
	if !slices.Contains(bk, sdk.KindStateBackend) {
		return c.errorAt(KeyStateBackend, backendKey, fmt.Errorf("%w: %q is a checkpoint storage, not a state backend (select it with %s)",
			ErrWrongKind, c.StateBackend, KeyCheckpointStorage))
	}
	dual := slices.Contains(bk, sdk.KindCheckpointStorage)

	storage := c.configuredStorage()
	c.StorageFromBackend = false
	switch {
	case storage != "":
		lineKey, storageKey := c.storageSelector()
		sk, err := kinds(storage)
		if err != nil {
			return c.errorAt(lineKey, storageKey, err)
		}
		if !slices.Contains(sk, sdk.KindCheckpointStorage) {
			return c.errorAt(lineKey, storageKey, fmt.Errorf("%w: %q is a state backend, not a checkpoint storage (select it with %s)",
				ErrWrongKind, storage, KeyStateBackend))
		}
		if dual && storage != c.StateBackend {
			warnings = append(warnings, fmt.Sprintf("state backend %q also implements CheckpointStorage, but %s selects %s; using %s",
				c.StateBackend, storageKey, storage, storage))
		}
		if c.storageAuto {
			c.storageSrc = "the deprecated " + c.storageImpl
			if storage == FSStorage {
				c.storageSrc += ", with a checkpoint dir set"
			} else {
				c.storageSrc += ", without a checkpoint dir"
			}
		}
	case dual:
		storage, c.StorageFromBackend, c.storageSrc = c.StateBackend, true, "the state backend, which also implements CheckpointStorage"
	case c.Checkpointing.Dir != "":
		storage, c.storageSrc = FSStorage, "default: a checkpoint dir is set"
	default:
		storage, c.storageSrc = JMStorage, "default"
	}
	if storage == FSStorage && c.Checkpointing.Dir == "" && c.storageOpts[FSStorage][sdk.OptionCheckpointDir].value == "" &&
		c.storageOpts[codePlugin][sdk.OptionCheckpointDir].value == "" {
		lineKey, key := c.storageSelector()
		return c.errorAt(lineKey, key, fmt.Errorf("%w: filesystem checkpoint storage (fsstorage) needs a checkpoint directory: set %s",
			ErrBadValue, KeyCheckpointDir))
	}
	c.CheckpointStorage = storage
	if c.restartDefault {
		c.Restart.Type = DefaultRestartStrategy(c.Checkpointing.Interval)
	}
	c.fillOptions()
	warnings = append(warnings, c.ignoredOptions()...)
	c.Warnings = append(append([]string{}, c.parseWarnings...), warnings...)
	return nil
}

// selectorKey names the key that selected a plugin, for messages.
func (c *Config) selectorKey(key, source string) string {
	if source == "code" {
		return key + " (set in code)"
	}
	return c.Written(key)
}

// storageSelector returns the current key whose line locates the storage choice and how
// messages name that choice.
func (c *Config) storageSelector() (lineKey, written string) {
	if c.storageImpl != "" {
		return KeyStateBackend, c.storageImpl
	}
	if c.storageSet == "" && !c.storageAuto {
		return KeyCheckpointStorage, KeyCheckpointStorage + " (default)"
	}
	return KeyCheckpointStorage, c.selectorKey(KeyCheckpointStorage, c.storageSrc)
}

// errorAt wraps err as an *Error about a key of the file or the command line.
func (c *Config) errorAt(canonical, written string, err error) error {
	if f := c.flags[canonical]; f != "" {
		return &Error{Flag: f, Key: written, Err: err}
	}
	file := c.File
	if c.lines[canonical] == 0 {
		file = ""
	}
	return &Error{File: file, Line: c.lines[canonical], Key: written, Err: err}
}

// ignoredOptions warns about options for plugins that are not selected, and about plugin
// options that a common key overrides.
func (c *Config) ignoredOptions() []string {
	type note struct {
		line int
		msg  string
	}
	var notes []note
	for _, set := range []struct {
		opts     map[string]map[string]optValue
		selected string
		role     string
	}{
		{c.backendOpts, c.StateBackend, "state backend"},
		{c.storageOpts, c.CheckpointStorage, "checkpoint storage"},
	} {
		for plugin, opts := range set.opts {
			if plugin == codePlugin || plugin == set.selected {
				continue
			}
			for _, o := range opts {
				notes = append(notes, note{o.line, fmt.Sprintf("%s is ignored: the %s is %s, not %s", c.Locate(o.key), set.role, set.selected, plugin)})
			}
		}
	}
	common := map[string]string{sdk.OptionCheckpointDir: KeyCheckpointDir, sdk.OptionSavepointDir: KeySavepointDir, sdk.OptionDataInlineThreshold: KeyDataInlineThreshold}
	for opt, key := range common {
		if o, ok := c.storageOpts[c.CheckpointStorage][opt]; ok && o.key != "" && c.StorageOptions[opt] != o.value {
			notes = append(notes, note{o.line, fmt.Sprintf("%s is ignored: %s sets %s", c.Locate(o.key), c.Written(key), opt)})
		}
	}
	sort.Slice(notes, func(i, j int) bool {
		return notes[i].line < notes[j].line || notes[i].line == notes[j].line && notes[i].msg < notes[j].msg
	})
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.msg
	}
	return out
}

package config

import (
	"fmt"
	"strconv"

	"github.com/flowstate/flowstate/sdk"
)

// Overrides are the choices made in code (the Environment API, command-line flags). Applied
// after Parse, they win over the file, as Flink's loaders let code win over the
// configuration. Empty fields leave the file's value. For plain settings such as the
// checkpoint interval, set the Config field directly after Parse.
type Overrides struct {
	// StateBackend selects the state backend plugin. Setting it drops a checkpoint storage
	// that the file only implied through a deprecated state.backend value.
	StateBackend string
	// BackendOptions are passed to the state backend plugin, over the file's options.
	BackendOptions sdk.Options
	// CheckpointStorage selects the checkpoint storage plugin; Flink's names jobmanager and
	// filesystem are accepted.
	CheckpointStorage string
	// StorageOptions are passed to the checkpoint storage plugin, over the file's options.
	StorageOptions sdk.Options
	// CheckpointDir sets execution.checkpointing.dir; relative paths resolve against the
	// working directory.
	CheckpointDir string
	// SavepointDir sets execution.checkpointing.savepoint-dir.
	SavepointDir string
	// PluginDir sets plugins.dir (the --plugin-dir flag).
	PluginDir string
}

// Apply layers o over the configuration. Call Resolve afterwards.
func (c *Config) Apply(o Overrides) error {
	if o.StateBackend != "" {
		v, err := parseBackendName(o.StateBackend, false)
		if err != nil {
			return &Error{Key: "state backend set in code", Err: fmt.Errorf("%w %q: %v", ErrBadValue, o.StateBackend, err)}
		}
		if v.legacy != nil {
			c.Deprecations = append(c.Deprecations, fmt.Sprintf("state backend %q set in code is deprecated: use %q (%s)", o.StateBackend, v.name, v.legacy.flink))
		}
		c.StateBackend, c.backendSrc = v.name, "code"
		if c.storageImpl != "" { // the file's implied storage went with the file's backend
			c.storageSet, c.storageImpl, c.storageSrc, c.storageAuto = "", "", "", false
		}
	}
	if o.CheckpointStorage != "" {
		name, err := parseStorageName(o.CheckpointStorage)
		if err != nil {
			return &Error{Key: "checkpoint storage set in code", Err: fmt.Errorf("%w %q: %v", ErrBadValue, o.CheckpointStorage, err)}
		}
		c.storageSet, c.storageSrc, c.storageImpl, c.storageAuto = name, "code", "", false
	}
	paths := []struct {
		v    string
		key  string
		dest *string
	}{
		{o.CheckpointDir, KeyCheckpointDir, &c.Checkpointing.Dir},
		{o.SavepointDir, KeySavepointDir, &c.Checkpointing.SavepointDir},
		{o.PluginDir, KeyPluginsDir, &c.Plugins.Dir},
	}
	for _, p := range paths {
		if p.v == "" {
			continue
		}
		abs, err := resolvePath(p.v, ".")
		if err != nil {
			return &Error{Key: p.key + " set in code", Err: fmt.Errorf("%w %q: %v", ErrBadValue, p.v, err)}
		}
		*p.dest = abs
		delete(c.lines, c.Written(p.key))
		delete(c.lines, p.key)
	}
	mergeCode(c.backendOpts, "", o.BackendOptions)
	mergeCode(c.storageOpts, "", o.StorageOptions)
	c.CheckpointStorage = c.configuredStorage()
	c.fillOptions()
	return nil
}

// codePlugin is the options map key of options set in code, which apply to whichever
// plugin is selected.
const codePlugin = ""

// mergeCode adds options set in code.
func mergeCode(dst map[string]map[string]optValue, plugin string, opts sdk.Options) {
	if len(opts) == 0 {
		return
	}
	if dst[plugin] == nil {
		dst[plugin] = map[string]optValue{}
	}
	for k, v := range opts {
		dst[plugin][k] = optValue{value: v}
	}
}

// configuredStorage is the storage the file or code selects, "" when none is.
func (c *Config) configuredStorage() string {
	if c.storageAuto {
		if c.Checkpointing.Dir != "" {
			return FSStorage
		}
		return JMStorage
	}
	return c.storageSet
}

// fillOptions computes BackendOptions and StorageOptions for the selected plugins.
func (c *Config) fillOptions() {
	c.BackendOptions = sdk.Options{}
	for k, o := range c.backendOpts[c.StateBackend] {
		c.BackendOptions[k] = o.value
	}
	if c.incrSet {
		c.BackendOptions[sdk.OptionIncremental] = strconv.FormatBool(c.Checkpointing.Incremental)
	}
	for k, o := range c.backendOpts[codePlugin] {
		c.BackendOptions[k] = o.value
	}
	c.StorageOptions = sdk.Options{}
	if c.CheckpointStorage == "" {
		return
	}
	for k, o := range c.storageOpts[c.CheckpointStorage] {
		c.StorageOptions[k] = o.value
	}
	if c.Checkpointing.Dir != "" {
		c.StorageOptions[sdk.OptionCheckpointDir] = c.Checkpointing.Dir
	}
	if c.Checkpointing.SavepointDir != "" {
		c.StorageOptions[sdk.OptionSavepointDir] = c.Checkpointing.SavepointDir
	}
	if c.inlineSet {
		c.StorageOptions[sdk.OptionDataInlineThreshold] = strconv.FormatInt(c.Checkpointing.DataInlineThreshold, 10)
	}
	for k, o := range c.storageOpts[codePlugin] {
		c.StorageOptions[k] = o.value
	}
}

// SetRetention sets execution.checkpointing.externalized-checkpoint-retention from code
// (DeleteOnCancel, RetainOnCancel or RetainNever, in any case).
func (c *Config) SetRetention(retention string) error {
	v, err := parseEnum(retention, currentKeys[KeyRetention].values)
	if err != nil {
		return &Error{Key: KeyRetention + " set in code", Err: fmt.Errorf("%w %q: %v", ErrBadValue, retention, err)}
	}
	c.Checkpointing.Retention = v
	return nil
}

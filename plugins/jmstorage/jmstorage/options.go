package jmstorage

import (
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/dirstorage"
)

// OptionMaxStateSize is the largest state stream jmstorage accepts (a human size).
const OptionMaxStateSize = "max-state-size"

// Defaults and limits of the options.
const (
	// DefaultMaxStateSize is Flink's JobManagerCheckpointStorage default: 5 MiB.
	DefaultMaxStateSize = 5 << 20
	// DefaultInlineThreshold is the default data-inline-threshold (20 KiB).
	DefaultInlineThreshold = dirstorage.DefaultInlineThreshold
	// MaxInlineThreshold is the largest data-inline-threshold accepted (1 MiB).
	MaxInlineThreshold = dirstorage.MaxInlineThreshold
)

// OptionKeys returns every option Configure accepts.
func OptionKeys() []string {
	return []string{sdk.OptionCheckpointDir, sdk.OptionSavepointDir, sdk.OptionDataInlineThreshold, OptionMaxStateSize}
}

// config is jmstorage's configuration, fixed by Configure.
type config struct {
	// dir, when set, receives each completed checkpoint as a self-contained _metadata file.
	dir string
	// savepointDir is the default savepoint directory, "" if unset.
	savepointDir    string
	maxStateSize    int64
	inlineThreshold int64
}

// parseConfig validates opts and returns the configuration they describe, and that of
// the directory storage that keeps checkpoint files and savepoints.
func parseConfig(opts sdk.Options) (config, dirstorage.Config, error) {
	if err := opts.CheckKnown(OptionKeys()...); err != nil {
		return config{}, dirstorage.Config{}, err
	}
	disk, err := dirstorage.ParseOptions(dirstorage.Local{}, opts)
	if err != nil {
		return config{}, dirstorage.Config{}, err
	}
	disk.Name, disk.HighlyAvailable = Name, true
	cfg := config{dir: disk.Dir, savepointDir: disk.SavepointDir, maxStateSize: DefaultMaxStateSize, inlineThreshold: disk.InlineThreshold}
	if n, ok, err := dirstorage.SizeOption(opts, OptionMaxStateSize, 1, 1<<40); err != nil {
		return config{}, dirstorage.Config{}, err
	} else if ok {
		cfg.maxStateSize = n
	}
	return cfg, disk, nil
}

package jmstorage

import (
	"fmt"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// OptionMaxStateSize is the largest state stream jmstorage accepts (a human size).
const OptionMaxStateSize = "max-state-size"

// Defaults and limits of the options.
const (
	// DefaultMaxStateSize is Flink's JobManagerCheckpointStorage default: 5 MiB.
	DefaultMaxStateSize = 5 << 20
	// DefaultInlineThreshold is the default data-inline-threshold (20 KiB).
	DefaultInlineThreshold = 20 << 10
	// MaxInlineThreshold is the largest data-inline-threshold accepted (1 MiB).
	MaxInlineThreshold = 1 << 20
)

// config is jmstorage's configuration, fixed by Configure.
type config struct {
	// dir, when set, receives each completed checkpoint as a self-contained _metadata file.
	dir string
	// savepointDir is the default savepoint directory, "" if unset.
	savepointDir    string
	maxStateSize    int64
	inlineThreshold int64
}

func defaultConfig() config {
	return config{maxStateSize: DefaultMaxStateSize, inlineThreshold: DefaultInlineThreshold}
}

// parseConfig validates opts and returns the configuration they describe.
func parseConfig(opts sdk.Options) (config, error) {
	cfg := defaultConfig()
	if err := opts.CheckKnown(sdk.OptionCheckpointDir, sdk.OptionSavepointDir, sdk.OptionDataInlineThreshold, OptionMaxStateSize); err != nil {
		return config{}, err
	}
	var err error
	if v, ok := opts[sdk.OptionCheckpointDir]; ok {
		if cfg.dir, err = layout.LocalPath(v); err != nil {
			return config{}, &sdk.OptionError{Option: sdk.OptionCheckpointDir, Value: v, Err: err}
		}
	}
	if v, ok := opts[sdk.OptionSavepointDir]; ok {
		if cfg.savepointDir, err = layout.LocalPath(v); err != nil {
			return config{}, &sdk.OptionError{Option: sdk.OptionSavepointDir, Value: v, Err: err}
		}
	}
	if v, ok := opts[sdk.OptionDataInlineThreshold]; ok {
		if cfg.inlineThreshold, err = parseSizeOption(v, 0, MaxInlineThreshold); err != nil {
			return config{}, &sdk.OptionError{Option: sdk.OptionDataInlineThreshold, Value: v, Err: err}
		}
	}
	if v, ok := opts[OptionMaxStateSize]; ok {
		if cfg.maxStateSize, err = parseSizeOption(v, 1, 1<<40); err != nil {
			return config{}, &sdk.OptionError{Option: OptionMaxStateSize, Value: v, Err: err}
		}
	}
	return cfg, nil
}

// parseSizeOption parses a human size and checks min <= size <= max.
func parseSizeOption(v string, minSize, maxSize int64) (int64, error) {
	n, err := sdk.ParseSize(v)
	if err != nil {
		return 0, err
	}
	if n < minSize || n > maxSize {
		return 0, fmt.Errorf("size %d bytes out of range [%d, %d]: %w", n, minSize, maxSize, sdk.ErrInvalidArgument)
	}
	return n, nil
}

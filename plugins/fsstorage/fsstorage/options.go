package fsstorage

import (
	"fmt"

	"github.com/flowstate/flowstate/plugins/fsstorage/internal/fsys"
	"github.com/flowstate/flowstate/sdk"
)

// Option keys fsstorage accepts besides the common sdk.OptionCheckpointDir,
// sdk.OptionSavepointDir and sdk.OptionDataInlineThreshold.
const (
	// OptionWriteBufferSize is the size of the buffer state streams collect small writes
	// in before writing them to their file (a human size such as "64kb").
	OptionWriteBufferSize = "write-buffer-size"
)

// Defaults and limits of the options.
const (
	// DefaultInlineThreshold is the default data-inline-threshold: state smaller than
	// this is kept inline in the checkpoint metadata (Flink: 20 KB).
	DefaultInlineThreshold = 20 << 10
	// MaxInlineThreshold is the largest data-inline-threshold accepted (Flink: 1 MiB).
	MaxInlineThreshold = 1 << 20
	// DefaultWriteBufferSize is the default write-buffer-size. Larger than Flink's 4 KiB:
	// see the package documentation.
	DefaultWriteBufferSize = 64 << 10
	// MaxWriteBufferSize is the largest write-buffer-size accepted.
	MaxWriteBufferSize = 64 << 20
)

// config is fsstorage's configuration, fixed by Configure.
type config struct {
	// dir is the checkpoint directory as a clean absolute local path, "" if unset.
	dir string
	// savepointDir is the default savepoint directory, "" if unset.
	savepointDir string
	// inlineThreshold: state streams smaller than this many bytes are returned inline.
	inlineThreshold int64
	// writeBufferSize is the buffer size of state streams.
	writeBufferSize int
}

func defaultConfig() config {
	return config{inlineThreshold: DefaultInlineThreshold, writeBufferSize: DefaultWriteBufferSize}
}

// parseConfig validates opts and returns the configuration they describe.
func parseConfig(opts sdk.Options) (config, error) {
	cfg := defaultConfig()
	known := append([]string{sdk.OptionCheckpointDir, sdk.OptionSavepointDir, sdk.OptionDataInlineThreshold, OptionWriteBufferSize}, fsys.S3OptionKeys()...)
	if err := opts.CheckKnown(known...); err != nil {
		return config{}, err
	}
	var err error
	if v, ok := opts[sdk.OptionCheckpointDir]; ok {
		if cfg.dir, err = localPath(v); err != nil {
			return config{}, &sdk.OptionError{Option: sdk.OptionCheckpointDir, Value: v, Err: err}
		}
	}
	if v, ok := opts[sdk.OptionSavepointDir]; ok {
		if cfg.savepointDir, err = localPath(v); err != nil {
			return config{}, &sdk.OptionError{Option: sdk.OptionSavepointDir, Value: v, Err: err}
		}
	}
	if v, ok := opts[sdk.OptionDataInlineThreshold]; ok {
		if cfg.inlineThreshold, err = parseSizeOption(v, 0, MaxInlineThreshold); err != nil {
			return config{}, &sdk.OptionError{Option: sdk.OptionDataInlineThreshold, Value: v, Err: err}
		}
	}
	if v, ok := opts[OptionWriteBufferSize]; ok {
		n, err := parseSizeOption(v, 1, MaxWriteBufferSize)
		if err != nil {
			return config{}, &sdk.OptionError{Option: OptionWriteBufferSize, Value: v, Err: err}
		}
		cfg.writeBufferSize = int(n)
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

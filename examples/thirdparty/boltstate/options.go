package boltstate

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/layout"
)

// Options the plugin knows, besides the common sdk.Option* keys.
const (
	// OptionLocalDir is where keyed backends keep their working bbolt files
	// (state.backend.boltdb.localdir).
	OptionLocalDir = "localdir"
)

// Defaults and limits.
const (
	// DefaultInlineThreshold is the default data-inline-threshold: state streams smaller than
	// this travel inline in the checkpoint metadata instead of being stored as their own
	// bucket.
	DefaultInlineThreshold = 20 << 10
	// MaxInlineThreshold is the largest data-inline-threshold accepted.
	MaxInlineThreshold = 1 << 20
)

// config is the parsed options.
type config struct {
	localDir        string // working files of keyed backends
	checkpointDir   string // "" when none is configured
	savepointDir    string // "" when none is configured
	inlineThreshold int
}

func defaultConfig() config {
	return config{
		localDir:        filepath.Join(os.TempDir(), "flowstate-boltdb"),
		inlineThreshold: DefaultInlineThreshold,
	}
}

// parseOptions checks opts and returns the configuration they describe.
func parseOptions(opts sdk.Options) (config, error) {
	cfg := defaultConfig()
	if err := opts.CheckKnown(OptionLocalDir, sdk.OptionIncremental, sdk.OptionCheckpointDir,
		sdk.OptionSavepointDir, sdk.OptionDataInlineThreshold); err != nil {
		return config{}, err
	}
	var err error
	if v, ok := opts[OptionLocalDir]; ok {
		if cfg.localDir, err = layout.LocalPath(v); err != nil {
			return config{}, &sdk.OptionError{Option: OptionLocalDir, Value: v, Err: err}
		}
	}
	if v, ok := opts[sdk.OptionIncremental]; ok {
		inc, err := strconv.ParseBool(v)
		if err != nil {
			return config{}, &sdk.OptionError{Option: sdk.OptionIncremental, Value: v, Err: fmt.Errorf("want true or false")}
		}
		if inc {
			sdk.Logger().Warn("the boltdb state backend takes full snapshots only; incremental checkpoints are not supported",
				"option", sdk.OptionIncremental, "value", v)
		}
	}
	if v, ok := opts[sdk.OptionCheckpointDir]; ok && v != "" {
		if cfg.checkpointDir, err = layout.LocalPath(v); err != nil {
			return config{}, &sdk.OptionError{Option: sdk.OptionCheckpointDir, Value: v, Err: err}
		}
	}
	if v, ok := opts[sdk.OptionSavepointDir]; ok && v != "" {
		if cfg.savepointDir, err = layout.LocalPath(v); err != nil {
			return config{}, &sdk.OptionError{Option: sdk.OptionSavepointDir, Value: v, Err: err}
		}
	}
	if v, ok := opts[sdk.OptionDataInlineThreshold]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > MaxInlineThreshold {
			return config{}, &sdk.OptionError{Option: sdk.OptionDataInlineThreshold, Value: v,
				Err: fmt.Errorf("want a number of bytes between 0 and %d", MaxInlineThreshold)}
		}
		cfg.inlineThreshold = n
	}
	return cfg, nil
}

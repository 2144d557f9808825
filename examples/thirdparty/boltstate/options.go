package boltstate

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/dirstorage"
	"github.com/flowstate/flowstate/sdk/layout"
)

// Options the plugin knows, besides the common sdk.Option* keys.
const (
	// OptionLocalDir is where keyed backends keep their working bbolt files
	// (state.backend.boltdb.localdir).
	OptionLocalDir = "localdir"
)

// config is the parsed options.
type config struct {
	localDir string            // working files of keyed backends
	storage  dirstorage.Config // the checkpoint storage's directories and inline threshold
}

func defaultConfig() config {
	storage, _ := dirstorage.ParseOptions(boltFS{}, nil)
	return config{localDir: filepath.Join(os.TempDir(), "flowstate-boltdb"), storage: storage}
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
	cfg.storage, err = dirstorage.ParseOptions(boltFS{}, opts)
	return cfg, err
}

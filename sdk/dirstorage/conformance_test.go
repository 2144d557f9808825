package dirstorage

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// plugin is the smallest plugin over a Storage: the Storage plus PluginInfo and Configure.
type plugin struct{ *Storage }

func (p *plugin) PluginInfo() sdk.PluginInfo { return sdk.PluginInfo{Name: "dirstorage", Version: "0"} }

func (p *plugin) Configure(_ context.Context, opts sdk.Options) (err error) {
	p.Storage, err = configure(Local{}, opts)
	return err
}

// TestConformance runs the conformance kit against a Storage on the local disk, with the
// defaults and with every stream in a file and a default savepoint directory.
func TestConformance(t *testing.T) {
	for name, extra := range map[string]sdk.Options{
		"defaults":                     {},
		"no-inline-with-savepoint-dir": {sdk.OptionDataInlineThreshold: "0", sdk.OptionSavepointDir: "savepoints"},
	} {
		t.Run(name, func(t *testing.T) {
			sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
				dir := t.TempDir()
				opts := sdk.Options{sdk.OptionCheckpointDir: filepath.Join(dir, "checkpoints")}
				for k, v := range extra {
					if k == sdk.OptionSavepointDir {
						v = filepath.Join(dir, v)
					}
					opts[k] = v
				}
				p := &plugin{}
				if err := p.Configure(context.Background(), opts); err != nil {
					t.Fatalf("Configure(%v): %v", opts, err)
				}
				return p
			})
		})
	}
}

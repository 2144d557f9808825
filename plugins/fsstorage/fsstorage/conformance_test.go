package fsstorage_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// conformanceOptions are the configurations the kit runs against: the defaults (small
// state inline, no default savepoint directory) and every stream in a file with a default
// savepoint directory.
func conformanceOptions(t *testing.T) map[string]sdk.Options {
	dir := t.TempDir()
	return map[string]sdk.Options{
		"defaults": {sdk.OptionCheckpointDir: filepath.Join(dir, "checkpoints")},
		"no-inline-with-savepoint-dir": {
			sdk.OptionCheckpointDir:       "file://" + filepath.Join(dir, "checkpoints"),
			sdk.OptionSavepointDir:        filepath.Join(dir, "savepoints"),
			sdk.OptionDataInlineThreshold: "0",
		},
	}
}

// TestConformance runs the sdktest kit against fsstorage in-process and as a plugin process.
func TestConformance(t *testing.T) {
	for _, name := range []string{"defaults", "no-inline-with-savepoint-dir"} {
		t.Run("in-process/"+name, func(t *testing.T) {
			sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
				s := fsstorage.New()
				if err := s.Configure(context.Background(), conformanceOptions(t)[name]); err != nil {
					t.Fatalf("Configure: %v", err)
				}
				return s
			})
		})
	}
	t.Run("process", func(t *testing.T) {
		path := testbin.Plugin(t, "fsstorage")
		sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
			return sdktest.ProcessCheckpointStorage(t, path, conformanceOptions(t)["no-inline-with-savepoint-dir"])
		})
	})
}

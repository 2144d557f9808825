package boltstate_test

import (
	"context"
	"testing"

	"github.com/flowstate/flowstate/examples/thirdparty/boltstate"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// configured returns a plugin configured with its directories under t.TempDir and the
// given extra options.
func configured(t *testing.T, extra sdk.Options) *boltstate.Plugin {
	t.Helper()
	p := boltstate.New()
	opts := sdk.Options{
		boltstate.OptionLocalDir: t.TempDir(),
		sdk.OptionCheckpointDir:  t.TempDir(),
	}
	for k, v := range extra {
		opts[k] = v
	}
	if err := p.Configure(context.Background(), opts); err != nil {
		t.Fatalf("Configure(%v): %v", opts, err)
	}
	return p
}

// TestConformance runs both suites of the conformance kit against the plugin, in-process.
func TestConformance(t *testing.T) {
	t.Run("StateBackend", func(t *testing.T) {
		sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend { return configured(t, nil) })
	})
	t.Run("CheckpointStorage", func(t *testing.T) {
		sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage { return configured(t, nil) })
	})
	t.Run("CheckpointStorageNoInline", func(t *testing.T) {
		sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
			return configured(t, sdk.Options{sdk.OptionDataInlineThreshold: "0"})
		})
	})
	t.Run("CheckpointStorageDefaultSavepointDir", func(t *testing.T) {
		sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
			return configured(t, sdk.Options{sdk.OptionSavepointDir: t.TempDir()})
		})
	})
}

package jmstorage_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/plugins/jmstorage/jmstorage"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// conformanceOptions are the configurations the kit runs against: state in memory only
// (no directories at all), and memory plus a checkpoint and a default savepoint directory
// with nothing inline.
func conformanceOptions(t *testing.T, name string) sdk.Options {
	if name == "memory-only" {
		return sdk.Options{}
	}
	dir := t.TempDir()
	return sdk.Options{
		sdk.OptionCheckpointDir:       filepath.Join(dir, "checkpoints"),
		sdk.OptionSavepointDir:        filepath.Join(dir, "savepoints"),
		sdk.OptionDataInlineThreshold: "0",
	}
}

// TestConformance runs the sdktest kit against jmstorage in-process and as a plugin process.
func TestConformance(t *testing.T) {
	for _, name := range []string{"memory-only", "with-dirs"} {
		t.Run("in-process/"+name, func(t *testing.T) {
			sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
				s := jmstorage.New()
				if err := s.Configure(context.Background(), conformanceOptions(t, name)); err != nil {
					t.Fatalf("Configure: %v", err)
				}
				return s
			})
		})
	}
	t.Run("process", func(t *testing.T) {
		path := testbin.Plugin(t, "jmstorage")
		sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
			return sdktest.ProcessCheckpointStorage(t, path, conformanceOptions(t, "memory-only"))
		})
	})
}

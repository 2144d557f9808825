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

// TestTwoWritersOfOneCheckpoint: two jmstorage plugins with one checkpoint directory (a
// runner that lost the job, whose metadata write was under way, and its successor) publish
// the same checkpoint: the file goes through sdk/dirstorage's publication, so exactly one
// wins, the other's error names its location, and the loser's disposal leaves the winner's
// checkpoint whole (see sdktest.TwoWritersOfOneCheckpoint).
func TestTwoWritersOfOneCheckpoint(t *testing.T) {
	opts := conformanceOptions(t, "with-dirs")
	sdktest.TwoWritersOfOneCheckpoint(t, func(t *testing.T) sdk.CheckpointStorage {
		s := jmstorage.New()
		if err := s.Configure(context.Background(), opts); err != nil {
			t.Fatalf("Configure: %v", err)
		}
		return s
	}, 10)
}

package leveldb_test

import (
	"context"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/plugins/leveldb/leveldb"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// conformanceOptions configure leveldb with a fresh working directory, taking incremental
// or full checkpoints.
func conformanceOptions(t *testing.T, incremental string) sdk.Options {
	return sdk.Options{"localdir": t.TempDir(), sdk.OptionIncremental: incremental}
}

// TestConformance runs the sdktest kit against leveldb in-process (incremental and full
// checkpoints) and as a plugin process.
func TestConformance(t *testing.T) {
	for _, incremental := range []string{"true", "false"} {
		t.Run("in-process/incremental="+incremental, func(t *testing.T) {
			sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
				b := leveldb.New()
				if err := b.Configure(context.Background(), conformanceOptions(t, incremental)); err != nil {
					t.Fatalf("Configure: %v", err)
				}
				return b
			})
		})
	}
	t.Run("process", func(t *testing.T) {
		path := testbin.Plugin(t, "leveldb")
		sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
			return sdktest.ProcessStateBackend(t, path, conformanceOptions(t, "false"))
		})
	})
}

package leveldb_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/plugins/leveldb/leveldb"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// conformanceOptions configure leveldb with a fresh working directory and a small
// memtable, so that the large-state check spans several table files.
func conformanceOptions(t *testing.T) sdk.Options {
	return sdk.Options{leveldb.OptionLocalDir: t.TempDir(), leveldb.OptionWriteBufferSize: "1mb"}
}

// TestConformance runs the sdktest kit against leveldb in-process and as a plugin process,
// with full and with incremental checkpoints (the kit's successive-checkpoint and rescale
// checks are where incremental snapshots break).
func TestConformance(t *testing.T) {
	for _, incremental := range []bool{false, true} {
		name := "full"
		if incremental {
			name = "incremental"
		}
		opts := func(t *testing.T) sdk.Options {
			o := conformanceOptions(t)
			o[sdk.OptionIncremental] = strconv.FormatBool(incremental)
			return o
		}
		t.Run(name, func(t *testing.T) {
			t.Run("in-process", func(t *testing.T) {
				sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
					b := leveldb.New()
					if err := b.Configure(context.Background(), opts(t)); err != nil {
						t.Fatalf("Configure: %v", err)
					}
					return b
				})
			})
			t.Run("process", func(t *testing.T) {
				path := testbin.Plugin(t, "leveldb")
				sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
					return sdktest.ProcessStateBackend(t, path, opts(t))
				})
			})
		})
	}
}

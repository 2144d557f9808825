package disaggregated_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/plugins/disaggregated/disaggregated"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// conformanceOptions configure the backend with fresh working and remote directories, a
// small memtable (so that the large-state check spans several table files) and a cache
// smaller than the large state (so that its reads evict and fetch tables again).
func conformanceOptions(t *testing.T) sdk.Options {
	dir := t.TempDir()
	return sdk.Options{
		disaggregated.OptionLocalDir:        filepath.Join(dir, "local"),
		disaggregated.OptionRemote:          "file://" + filepath.Join(dir, "remote"),
		disaggregated.OptionWriteBufferSize: "1mb",
		disaggregated.OptionCacheSize:       "2mb",
	}
}

// TestConformance runs the sdktest kit against the backend in-process and as a plugin
// process.
func TestConformance(t *testing.T) {
	t.Run("in-process", func(t *testing.T) {
		sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
			b := disaggregated.New()
			if err := b.Configure(context.Background(), conformanceOptions(t)); err != nil {
				t.Fatalf("Configure: %v", err)
			}
			return b
		})
	})
	t.Run("process", func(t *testing.T) {
		path := testbin.Plugin(t, "disaggregated")
		sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
			return sdktest.ProcessStateBackend(t, path, conformanceOptions(t))
		})
	})
}

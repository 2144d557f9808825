package hashmap_test

import (
	"context"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// TestConformance runs the sdktest kit against hashmap in-process and as a plugin process.
func TestConformance(t *testing.T) {
	t.Run("in-process", func(t *testing.T) {
		sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
			b := hashmap.New()
			if err := b.Configure(context.Background(), sdk.Options{}); err != nil {
				t.Fatalf("Configure: %v", err)
			}
			return b
		})
	})
	t.Run("process", func(t *testing.T) {
		path := testbin.Plugin(t, "hashmap")
		sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
			return sdktest.ProcessStateBackend(t, path, sdk.Options{})
		})
	})
}

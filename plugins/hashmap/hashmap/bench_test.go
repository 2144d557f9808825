package hashmap

import (
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// BenchmarkKit runs the kit's benchmarks (Get, Write, SnapshotWrite) against hashmap with
// default options.
func BenchmarkKit(b *testing.B) {
	sdktest.BenchStateBackend(b, func(b *testing.B) sdk.StateBackend { return testPlugin(b, nil) })
}

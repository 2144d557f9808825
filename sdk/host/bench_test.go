package host_test

import (
	"fmt"
	"testing"

	"github.com/flowstate/flowstate/sdk"
)

// BenchmarkBatch measures batched Get and Write across the plugin boundary; keys/s is the
// figure to compare with the in-process map.
func BenchmarkBatch(b *testing.B) {
	p := startPlugin(b, "mem")
	kb := newKeyed(b, p, allGroups)
	ctx := ctxT(b)
	for _, n := range []int{256, 4096} {
		keys := make([][]byte, n)
		muts := make([]sdk.Mutation, n)
		for i := range keys {
			keys[i] = key(i%128, fmt.Sprintf("key-%08d", i))
			muts[i] = sdk.Mutation{Key: keys[i], Value: []byte("value-0123456789")}
		}
		b.Run(fmt.Sprintf("write-%d", n), func(b *testing.B) {
			for b.Loop() {
				if err := kb.Write(ctx, muts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "keys/s")
		})
		b.Run(fmt.Sprintf("get-%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := kb.Get(ctx, keys); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "keys/s")
		})
	}
}

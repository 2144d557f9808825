package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/runtime/jobs"
)

// BenchmarkAggregate runs the same aggregate job across the plugin boundary and
// in-process, side by side: go test -bench Aggregate ./cmd/flowbench. records/s is the
// figure to compare.
func BenchmarkAggregate(b *testing.B) {
	const records = 200_000
	for _, backend := range []string{"hashmap", "leveldb"} {
		for _, m := range modes {
			b.Run(fmt.Sprintf("%s/%s", backend, m), func(b *testing.B) {
				var total int64
				for b.Loop() {
					job, err := jobs.Aggregate(jobs.Spec{Name: "aggregate", Keys: 10_000, Records: records, Parallelism: 2})
					if err != nil {
						b.Fatal(err)
					}
					r, err := runJob(context.Background(), runSpec{backend: backend, mode: m, pluginDir: testbin.PluginDir(b), checkpoints: b.TempDir()}, job)
					if err != nil {
						b.Fatal(err)
					}
					total += r.stats.Records
				}
				b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}

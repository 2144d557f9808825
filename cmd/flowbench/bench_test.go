package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
)

// BenchmarkAggregate runs the same aggregate job across the plugin boundary and
// in-process, side by side: go test -bench Aggregate ./cmd/flowbench. records/s is the
// figure to compare. The sizes are those of `make bench` (item 1), so a profile of one
// variant, e.g.
//
//	FLOWSTATE_PLUGIN_CPUPROFILE=/tmp/prof go test -run '^$' -bench 'Aggregate/leveldb/plugin' \
//	    -benchtime 1x -cpuprofile /tmp/prof/runner.pprof ./cmd/flowbench
//
// shows where that job's time goes, in the runner and in each plugin.
func BenchmarkAggregate(b *testing.B) {
	s := fullSettings()
	pluginDir := testbin.PluginDir(b) // builds the plugins once, before any timing
	for _, backend := range []string{"hashmap", "leveldb"} {
		for _, m := range modes {
			b.Run(fmt.Sprintf("%s/%s", backend, m), func(b *testing.B) {
				var total int64
				for b.Loop() {
					job, err := aggregateJob(s)
					if err != nil {
						b.Fatal(err)
					}
					r, err := runJob(context.Background(), runSpec{backend: backend, mode: m, pluginDir: pluginDir, checkpoints: b.TempDir()}, job)
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

// BenchmarkWordCount runs the wordcount job of `make bench` (item 7) across the plugin
// boundary and in-process, and the hand-written one-thread count it is measured against:
// words/s is the figure to compare.
func BenchmarkWordCount(b *testing.B) {
	s := fullSettings()
	pluginDir := testbin.PluginDir(b)
	input := filepath.Join(b.TempDir(), "input.txt")
	if err := writeText(input, s.WordCountBytes); err != nil {
		b.Fatal(err)
	}
	counts, words, _, err := handWrittenWordCount(input, filepath.Join(b.TempDir(), "out.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("hand-written", func(b *testing.B) {
		for b.Loop() {
			if _, _, _, err := handWrittenWordCount(input, filepath.Join(b.TempDir(), "out.txt")); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(words)*float64(b.N)/b.Elapsed().Seconds(), "words/s")
	})
	for _, backend := range []string{"hashmap", "leveldb"} {
		for _, m := range modes {
			b.Run(fmt.Sprintf("%s/%s", backend, m), func(b *testing.B) {
				bb := &bench{s: settings{PluginDir: pluginDir}}
				var written int64
				for b.Loop() {
					r, err := bb.wordCountJob(context.Background(), backend, m, input, b.TempDir(), counts, words)
					if err != nil {
						b.Fatal(err)
					}
					written += r.stats.KeysWritten
				}
				b.ReportMetric(float64(words)*float64(b.N)/b.Elapsed().Seconds(), "words/s")
				b.ReportMetric(float64(written)/float64(words)/float64(b.N), "keys-written/word")
			})
		}
	}
}

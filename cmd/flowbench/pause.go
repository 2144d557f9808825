package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/checkpoint"
)

// pauseResult is item 3's synchronous pause: the time keyed subtasks spend inside
// KeyedStateBackend.Snapshot while a job with about PauseBytes of hashmap state runs and
// checkpoints back to back.
type pauseResult struct {
	keys      int64
	valueSize int
	pauses    []time.Duration
	ckpts     []time.Duration
	sizes     []int64
	records   int64
	rate      float64 // records/s processed while checkpointing
	wanted    float64 // the source's rate limit
	restore   time.Duration
}

// pauses fills the state in a first run (final checkpoint only), then restores it and
// processes rate-limited updates with checkpoints as often as the coordinator allows.
func (b *bench) pauses(ctx context.Context) (*pauseResult, error) {
	dir, err := freshDir(b.s.Work, "pause")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	v := b.s.StateValue
	res := &pauseResult{keys: b.s.PauseBytes / int64(v+16), valueSize: v, wanted: b.s.PauseRate}
	spec := runSpec{backend: builtins.Hashmap, mode: plugin, pluginDir: b.s.PluginDir, checkpoints: dir}
	r, err := runJob(ctx, spec, bigStateJob(res.keys, res.keys, v, 0, time.Time{}, 2))
	if err != nil {
		return nil, err
	}
	if r.last == nil {
		return nil, fmt.Errorf("pause: the fill run completed no checkpoint")
	}
	b.logf("pause: %d keys of %d bytes filled in %s; checkpoint of %s", res.keys, v, r.elapsed.Round(time.Millisecond), bytesHuman(r.last.Metadata.StateSize()))
	// The update phase is timed: the source ends after PauseSeconds, whatever it managed.
	updates := int64(b.s.PauseRate * b.s.PauseSeconds)
	spec.from = r.last.Location.ExternalPointer
	spec.interval = time.Millisecond
	spec.onComplete = func(c *checkpoint.Completed) { res.sizes = append(res.sizes, c.Metadata.StateSize()) }
	start := time.Now()
	until := start.Add(time.Duration(b.s.PauseSeconds * float64(time.Second)))
	r, err = runJob(ctx, spec, bigStateJob(res.keys, res.keys+updates, v, b.s.PauseRate, until, 2))
	if err != nil {
		return nil, err
	}
	res.pauses, res.ckpts, res.records = r.stats.SnapshotPauses, r.stats.CheckpointDurations, r.stats.Records
	if !r.stats.FirstRecord.IsZero() {
		res.restore = r.stats.FirstRecord.Sub(start)
		res.rate = float64(r.stats.Records) / start.Add(r.elapsed).Sub(r.stats.FirstRecord).Seconds()
	}
	b.logf("pause: %d checkpoints, %d snapshot pauses, p99 %.2f ms; %s records/s processed meanwhile",
		len(res.ckpts), len(res.pauses), percentile(durationsMs(res.pauses), 99), human(res.rate))
	return res, nil
}

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
)

// variantRuns are the rounds of one variant of a comparison.
type variantRuns struct {
	rate      []float64 // records per second
	cpuPerRec []float64 // CPU microseconds per record, every process involved
	// messages are the gRPC messages per record of each round's state traffic across the
	// plugin boundary; 0 in-process, where there are none.
	messages []float64
	stats    dataflow.RunStats // the last round's
	// grpcMessages is the number of gRPC messages of the last round's state traffic.
	grpcMessages int64
}

// add records one round's run.
func (v *variantRuns) add(r runResult) {
	n := float64(r.stats.Records)
	v.rate = append(v.rate, n/r.elapsed.Seconds())
	v.cpuPerRec = append(v.cpuPerRec, float64(r.cpu.Microseconds())/n)
	v.messages = append(v.messages, float64(r.grpcMessages)/n)
	v.stats = r.stats
	v.grpcMessages = r.grpcMessages
}

// throughputResult compares one backend's aggregate job through the plugin and in-process.
type throughputResult struct {
	backend string
	runs    map[mode]*variantRuns
	rounds  int
}

func (r *throughputResult) ratio() float64 {
	return pairedRatio(r.runs[plugin].rate, r.runs[inProcess].rate)
}

// worst is the lowest ratio of a round.
func (r *throughputResult) worst() float64 {
	return minOf(roundRatios(r.runs[plugin].rate, r.runs[inProcess].rate))
}

// aggregateJob is the job of item 1 at the sizes of s: the aggregate job over s.AggKeys
// keys, s.AggRecords records, parallelism 2.
func aggregateJob(s settings) (*dataflow.Job, error) {
	job, err := jobs.Aggregate(jobs.Spec{Name: "aggregate", Type: "aggregate", Keys: s.AggKeys, Records: s.AggRecords, Parallelism: 2})
	if err != nil {
		return nil, fmt.Errorf("aggregate job: %w", err)
	}
	return job, nil
}

// throughput runs the aggregate job (item 1) on backend, plugin and in-process
// alternating, for the configured rounds or until deadline.
func (b *bench) throughput(ctx context.Context, backend string, deadline time.Time) (*throughputResult, error) {
	res := &throughputResult{backend: backend, runs: map[mode]*variantRuns{plugin: {}, inProcess: {}}}
	for round := 0; round < b.s.JobRounds; round++ {
		if round > 0 && time.Now().After(deadline) {
			b.logf("aggregate on %s: stopping after %d rounds (time budget)", backend, round)
			break
		}
		for _, m := range roundModes(round) {
			dir, err := freshDir(b.s.Work, "aggregate")
			if err != nil {
				return nil, err
			}
			job, err := aggregateJob(b.s)
			if err != nil {
				return nil, err
			}
			r, err := runJob(ctx, runSpec{backend: backend, mode: m, pluginDir: b.s.PluginDir, checkpoints: dir}, job)
			if err != nil {
				return nil, err
			}
			v := res.runs[m]
			v.add(r)
			b.logf("aggregate %s %-10s round %d: %s records/s (%s)", backend, m, round+1, human(v.rate[len(v.rate)-1]), r.elapsed.Round(time.Millisecond))
		}
		res.rounds = round + 1
	}
	return res, nil
}

// scalePoint is one state size of item 5.
type scalePoint struct {
	keys, records int64
	rate          map[mode]float64
	ckpt          map[mode]time.Duration // the final checkpoint, trigger to metadata
	size          map[mode]int64         // its state size
	skipped       string                 // why the size was not measured
}

// scale runs scaleJob at each key count, plugin and in-process, one round each; which
// variant goes first alternates from one key count to the next.
func (b *bench) scale(ctx context.Context, backend string, deadline time.Time) ([]scalePoint, error) {
	var out []scalePoint
	for i, keys := range b.s.ScaleKeys {
		p := scalePoint{keys: keys, records: max(keys, b.s.AggRecords), rate: map[mode]float64{}, ckpt: map[mode]time.Duration{}, size: map[mode]int64{}}
		if n := len(out); n > 0 {
			// Predict this size from the last one's slower variant, both variants.
			prev := out[n-1]
			est := time.Duration(2 * float64(p.records) / min(prev.rate[plugin], prev.rate[inProcess]) * float64(time.Second))
			if time.Now().Add(est).After(deadline) {
				b.logf("scale: skipping %d keys and up: about %s would exceed the time budget", keys, est.Round(time.Second))
				p.skipped = fmt.Sprintf("skipped: about %s would have exceeded the time budget", est.Round(time.Second))
				out = append(out, p)
				break
			}
		}
		for _, m := range roundModes(i) {
			dir, err := freshDir(b.s.Work, "scale")
			if err != nil {
				return nil, err
			}
			r, err := runJob(ctx, runSpec{backend: backend, mode: m, pluginDir: b.s.PluginDir, checkpoints: dir}, scaleJob(keys, p.records, 2))
			if err != nil {
				return nil, err
			}
			if r.last == nil || len(r.stats.CheckpointDurations) == 0 {
				return nil, fmt.Errorf("scale job with %d keys (%s): no checkpoint completed", keys, m)
			}
			p.rate[m] = float64(r.stats.Records) / r.elapsed.Seconds()
			p.ckpt[m] = r.stats.CheckpointDurations[len(r.stats.CheckpointDurations)-1]
			p.size[m] = r.last.Metadata.StateSize()
			b.logf("scale %s %d keys %-10s: %s records/s, final checkpoint %s of %s", backend, keys, m, human(p.rate[m]), p.ckpt[m].Round(time.Millisecond), bytesHuman(p.size[m]))
		}
		out = append(out, p)
	}
	return out, nil
}

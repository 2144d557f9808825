package main

import (
	"fmt"
	"io"
	"time"
)

// settings size the benchmark.
type settings struct {
	PluginDir string // built plugins (make build)
	Runner    string // the runner binary, for the start-up figure
	Work      string // scratch directory on the disk being measured
	Rounds    int    // rounds of the checkpoint and restore comparisons (items 3, 4)
	// JobRounds are the rounds of the aggregate and word count comparisons (items 1, 2,
	// 7): their runs take half a second, and a VM's speed moves by 10-30% from one to the
	// next, so they get more rounds for a steady median.
	JobRounds int
	Budget    time.Duration

	AggKeys, AggRecords int64 // item 1: the aggregate job
	StateBytes          int64 // items 3 and 4: state checkpointed and restored
	StateValue          int   // value size of that state
	PauseBytes          int64 // item 3: hashmap state of the job whose pauses are timed
	PauseSeconds        float64
	PauseRate           float64 // records/s while checkpoints run
	ScaleKeys           []int64 // item 5
	IncrKeys            int64   // item 5: entries of the incremental checkpoint test
	StartupRounds       int     // item 6
	WordCountBytes      int64   // item 7: size of the word count's input text
	// MemoryKeys are the distinct keys of the memory figures (issue 24): peak RSS of
	// `runner run` and its plugins on each backend.
	MemoryKeys []int64
	// NATSServer is the nats-server binary of the jetstream phase (issue 26), which
	// measures JetStream's raw limits with nats.go alone over JetStreamBytes of the word
	// count's text, one message per line, in JetStreamRounds rounds.
	NATSServer      string
	JetStreamBytes  int64
	JetStreamRounds int
	// JetStreamCopyRepeat is how many times over the copy stages (async publish, the
	// ordered consumer, and the source and sink figures) move the input: enough that the
	// copying outlasts the runner's fixed end (its final checkpoint and commit, its exit)
	// by far.
	JetStreamCopyRepeat int
	// DisaggBytes are the state sizes of the disaggregated phase (issue 28), on the S3
	// server at S3Endpoint; its throughput runs measure DisaggWindow after a warm-up of
	// DisaggWarmup; DisaggWriteBuffer is both backends' write-buffer-size (0: their
	// default), small in quick runs so that tiny state still makes table files; DiskSample
	// is how often the backends' local directories are measured.
	DisaggBytes       []int64
	S3Endpoint        string
	DisaggWarmup      time.Duration
	DisaggWindow      time.Duration
	DisaggWriteBuffer int64
	DiskSample        time.Duration
	// DistBytes of the word count's text are the input of the distributed phase (issue
	// 27), which runs the word count on one runner and in distributed mode on 1, 2 and 3
	// runners at parallelism DistParallelism, each variant once in each of DistRounds
	// rounds.
	DistBytes       int64
	DistRounds      int
	DistParallelism int
	// DistFrameBytes go through nats-server in each round of the distributed phase in
	// messages of a full repartition frame, with nats.go alone: its CPU per byte.
	DistFrameBytes int64
}

// fullSettings are the figures of issues 7 and 17, sized for about 3 minutes on a quiet
// 2-core machine.
func fullSettings() settings {
	return settings{
		Rounds: 5, JobRounds: 15, Budget: 9 * time.Minute,
		AggKeys: 100_000, AggRecords: 2_000_000,
		StateBytes: 1 << 30, StateValue: 1000,
		PauseBytes: 1 << 30, PauseSeconds: 20, PauseRate: 40_000,
		ScaleKeys: []int64{100_000, 1_000_000, 10_000_000},
		IncrKeys:  1_000_000, StartupRounds: 5,
		WordCountBytes: 9_400_000,
		MemoryKeys:     []int64{3_000_000},
		JetStreamBytes: 4_000_000, JetStreamRounds: 3, JetStreamCopyRepeat: 6,
		DisaggBytes: []int64{1 << 30}, DisaggWarmup: 10 * time.Second, DisaggWindow: 30 * time.Second,
		DiskSample: 100 * time.Millisecond,
		DistBytes:  4_000_000, DistRounds: 3, DistParallelism: 3, DistFrameBytes: 128 << 20,
	}
}

// quickSettings run every figure on tiny sizes (tests, smoke runs).
func quickSettings() settings {
	return settings{
		Rounds: 2, JobRounds: 2, Budget: 2 * time.Minute,
		AggKeys: 1000, AggRecords: 20_000,
		StateBytes: 4 << 20, StateValue: 1000,
		PauseBytes: 4 << 20, PauseSeconds: 1, PauseRate: 5000,
		ScaleKeys: []int64{1000, 10_000},
		IncrKeys:  10_000, StartupRounds: 2,
		WordCountBytes: 200_000,
		MemoryKeys:     []int64{100_000},
		JetStreamBytes: 100_000, JetStreamRounds: 1, JetStreamCopyRepeat: 2,
		DisaggBytes: []int64{4 << 20, 8 << 20}, DisaggWarmup: 200 * time.Millisecond, DisaggWindow: time.Second,
		DisaggWriteBuffer: 1 << 20, DiskSample: 20 * time.Millisecond,
		DistBytes: 100_000, DistRounds: 1, DistParallelism: 3, DistFrameBytes: 4 << 20,
	}
}

// bench runs the phases and collects the report.
type bench struct {
	s     settings
	start time.Time
	log   io.Writer
}

// logf prints a progress line with the time since the start.
func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "[flowbench %6.1fs] %s\n", time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
}

// deadline is when a phase that may use share of the budget (counted from the start)
// should stop adding rounds.
func (b *bench) deadline(share float64) time.Time {
	return b.start.Add(time.Duration(share * float64(b.s.Budget)))
}

package dataflow_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/sdk"
)

// probedFixture is a word count over fsstorage wrapped in a probe.
func probedFixture(t *testing.T, size int) (*fixture, *probe) {
	t.Helper()
	fs := fsstorage.New()
	if err := fs.Configure(context.Background(), sdk.Options{"dir": filepath.Join(t.TempDir(), "checkpoints")}); err != nil {
		t.Fatal(err)
	}
	p := newProbe(fs)
	return newFixture(t, size, p), p
}

// runFor runs the fixture's word count at rate records/s with env and checks the output.
func (f *fixture) runFor(t *testing.T, rate float64, env dataflow.Env) {
	t.Helper()
	j, err := jobs.WordCount(jobs.Spec{Name: "wordcount", Parallelism: 2, Input: f.input, Output: f.output, BatchSize: 256, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a generous bound, not a wait
	defer cancel()
	if err := dataflow.Run(ctx, j, env); err != nil {
		t.Fatal(err)
	}
	if err := wordcheck.Check(f.expected, f.output); err != nil {
		t.Fatal(err)
	}
}

// inFlight replays the events and returns the most checkpoints that were in flight at
// once (triggered, neither completed nor disposed) and the ids of the completions in order.
func inFlight(events []event) (peak int, completed []int64) {
	open := map[int64]bool{}
	for _, e := range events {
		switch e.kind {
		case "trigger":
			open[e.id] = true
			peak = max(peak, len(open))
		case "complete":
			delete(open, e.id)
			completed = append(completed, e.id)
		case "dispose":
			delete(open, e.id)
		}
	}
	return peak, completed
}

// indexOf returns the position of event "kind id" in events, -1 when absent.
func indexOf(events []event, kind string, id int64) int {
	for i, e := range events {
		if e.kind == kind && e.id == id {
			return i
		}
	}
	return -1
}

// TestMaxConcurrentCheckpoints holds the state uploads of checkpoints 1 and 2 until
// checkpoint 3 is triggered: with max-concurrent 3 the coordinator triggers it while the
// other two are in flight, never has more than 3 in flight, and completes checkpoints in
// id order (one that completes first subsumes the older).
func TestMaxConcurrentCheckpoints(t *testing.T) {
	f, p := probedFixture(t, 256<<10)
	p.hold[1], p.hold[2] = "trigger 3", "trigger 3"
	stats := &dataflow.RunStats{}
	env := f.env(stats, nil)
	env.MaxConcurrent = 3
	f.runFor(t, 25000, env)
	events := p.log()
	peak, completed := inFlight(events)
	if peak != 3 {
		t.Fatalf("at most %d checkpoints were in flight at once, want exactly 3: %v", peak, events)
	}
	t3 := indexOf(events, "trigger", 3)
	for _, id := range []int64{1, 2} {
		if end := max(indexOf(events, "complete", id), indexOf(events, "dispose", id)); end < t3 {
			t.Fatalf("checkpoint %d ended (event %d) before checkpoint 3 was triggered (event %d): %v", id, end, t3, events)
		}
	}
	for i := 1; i < len(completed); i++ {
		if completed[i] <= completed[i-1] {
			t.Fatalf("checkpoints completed out of order: %v", completed)
		}
	}
}

// TestOneCheckpointInFlightByDefault: without max-concurrent, a checkpoint is triggered
// only once the one before it completed.
func TestOneCheckpointInFlightByDefault(t *testing.T) {
	f, p := probedFixture(t, 256<<10)
	stats := &dataflow.RunStats{}
	f.runFor(t, 40000, f.env(stats, nil))
	peak, completed := inFlight(p.log())
	if peak != 1 || len(completed) < 2 {
		t.Fatalf("%d in flight at once (want 1), %d completed (want several)", peak, len(completed))
	}
}

// TestCheckpointsCompleteAndExpireOnTheirOwn: with two checkpoints in flight, checkpoint 1
// (held until 2 is triggered) completes while 2 is in flight; 2 (held until it is disposed
// of) expires by the timeout while 3 is in flight; 3 (held until 2 is disposed of)
// completes after that. min-pause puts 3's trigger, and so its deadline, well after 2's.
func TestCheckpointsCompleteAndExpireOnTheirOwn(t *testing.T) {
	f, p := probedFixture(t, 512<<10)
	p.hold[1], p.hold[2], p.hold[3] = "trigger 2", "dispose 2", "dispose 2"
	stats := &dataflow.RunStats{}
	env := f.env(stats, nil)
	env.MaxConcurrent, env.MinPause, env.Timeout, env.TolerableFailures = 2, 400*time.Millisecond, 1500*time.Millisecond, 100
	f.runFor(t, 15000, env)
	events := p.log()
	at := func(kind string, id int64) int { return indexOf(events, kind, id) }
	if at("dispose", 2) < 0 || at("complete", 2) >= 0 {
		t.Fatalf("checkpoint 2 did not expire: %v", events)
	}
	if c1 := at("complete", 1); c1 < at("trigger", 2) || c1 > at("dispose", 2) {
		t.Fatalf("want checkpoint 1 completed while checkpoint 2 was in flight: %v", events)
	}
	if t3, c3 := at("trigger", 3), at("complete", 3); t3 < 0 || t3 > at("dispose", 2) || c3 < at("dispose", 2) {
		t.Fatalf("want checkpoint 3 triggered while 2 was in flight and completed after 2 expired: %v", events)
	}
	if stats.FailedCheckpoints < 1 {
		t.Fatal("the expired checkpoint was not counted as failed")
	}
}

// TestNewerCheckpointSubsumesOlder holds checkpoint 1 until checkpoint 2 completed: 2
// completes first and aborts 1, which does not count as a failed checkpoint.
func TestNewerCheckpointSubsumesOlder(t *testing.T) {
	f, p := probedFixture(t, 256<<10)
	p.hold[1] = "complete 2"
	stats := &dataflow.RunStats{}
	env := f.env(stats, nil)
	env.MaxConcurrent = 2
	f.runFor(t, 25000, env)
	events := p.log()
	if d1, c2 := indexOf(events, "dispose", 1), indexOf(events, "complete", 2); d1 < c2 || c2 < 0 || indexOf(events, "complete", 1) >= 0 {
		t.Fatalf("want checkpoint 1 aborted once checkpoint 2 completed: %v", events)
	}
	if stats.FailedCheckpoints != 0 {
		t.Fatalf("a subsumed checkpoint counted as failed (%d failures)", stats.FailedCheckpoints)
	}
}

// TestMinPause: every periodic checkpoint is triggered at least min-pause after the
// completion before it, though the interval is much shorter. The times come from the
// storage: a completion is recorded before the coordinator notes it, a trigger after the
// coordinator decided it, so a correct coordinator never shows a shorter gap.
func TestMinPause(t *testing.T) {
	const minPause = 150 * time.Millisecond
	f, p := probedFixture(t, 256<<10)
	env := f.env(&dataflow.RunStats{}, nil)
	env.Interval, env.MinPause = 5*time.Millisecond, minPause
	f.runFor(t, 8000, env)
	events := p.log()
	var lastComplete time.Time
	checked := 0
	for i, e := range events {
		switch {
		case e.kind == "complete":
			lastComplete = e.at
		case e.kind == "trigger" && !lastComplete.IsZero() && i != lastTrigger(events):
			if gap := e.at.Sub(lastComplete); gap < minPause {
				t.Fatalf("checkpoint %d triggered %s after the last completion, want at least %s", e.id, gap, minPause)
			}
			checked++
		}
	}
	if checked < 2 {
		t.Fatalf("only %d periodic checkpoints after a completion: %v", checked, events)
	}
}

// lastTrigger is the index of the last trigger: the final checkpoint, which min-pause does
// not delay.
func lastTrigger(events []event) int {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].kind == "trigger" {
			return i
		}
	}
	return -1
}

package dataflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/state"
)

func TestRunStatsTimeCheckpointsAndFirstRecord(t *testing.T) {
	f := newFixture(t, 1<<20, nil)
	stats := &dataflow.RunStats{}
	before := time.Now()
	if err := dataflow.Run(context.Background(), f.job(t, 2), f.env(stats, nil)); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	if stats.Checkpoints < 1 || len(stats.CheckpointDurations) != stats.Checkpoints {
		t.Fatalf("%d checkpoints but %d durations", stats.Checkpoints, len(stats.CheckpointDurations))
	}
	// One keyed stage of 2 subtasks: each snapshots once per checkpoint it took part in.
	if len(stats.SnapshotPauses) < 2*stats.Checkpoints {
		t.Fatalf("%d snapshot pauses for %d checkpoints of 2 keyed subtasks", len(stats.SnapshotPauses), stats.Checkpoints)
	}
	for i, d := range stats.CheckpointDurations {
		if d <= 0 || d > after.Sub(before) {
			t.Fatalf("checkpoint duration %d is %s, outside the run's %s", i, d, after.Sub(before))
		}
	}
	for i, d := range stats.SnapshotPauses {
		if d <= 0 || d > after.Sub(before) {
			t.Fatalf("snapshot pause %d is %s, outside the run's %s", i, d, after.Sub(before))
		}
	}
	if stats.FirstRecord.Before(before) || stats.FirstRecord.After(after) {
		t.Fatalf("first record at %s, outside the run [%s, %s]", stats.FirstRecord, before, after)
	}
	// Every state key is at least key group (2) + name length (1) + "count" (5) + 1 byte.
	if min := 9 * (stats.KeysRead + stats.KeysWritten); stats.BytesSent < min {
		t.Fatalf("%d bytes sent for %d keys read and %d written, want at least %d", stats.BytesSent, stats.KeysRead, stats.KeysWritten, min)
	}
	if stats.CacheHits == 0 {
		t.Fatal("no state value came from the store's cache, yet words repeat")
	}
}

func TestRunStatsAdd(t *testing.T) {
	early, late := time.Unix(100, 0), time.Unix(200, 0)
	a := &dataflow.RunStats{Stats: state.Stats{Records: 1, BytesSent: 10}, Checkpoints: 1,
		SnapshotPauses: []time.Duration{time.Millisecond}, CheckpointDurations: []time.Duration{time.Second}, FirstRecord: late}
	b := &dataflow.RunStats{Stats: state.Stats{Records: 2, BytesSent: 5}, Checkpoints: 2, FailedCheckpoints: 1,
		SnapshotPauses: []time.Duration{2 * time.Millisecond}, FirstRecord: early}
	a.Add(b)
	if a.Records != 3 || a.BytesSent != 15 || a.Checkpoints != 3 || a.FailedCheckpoints != 1 {
		t.Fatalf("counts not added: %+v", a)
	}
	if len(a.SnapshotPauses) != 2 || len(a.CheckpointDurations) != 1 {
		t.Fatalf("samples not appended: %v %v", a.SnapshotPauses, a.CheckpointDurations)
	}
	if !a.FirstRecord.Equal(early) {
		t.Fatalf("FirstRecord %s, want the earlier %s", a.FirstRecord, early)
	}
	a.Add(&dataflow.RunStats{})
	if !a.FirstRecord.Equal(early) {
		t.Fatalf("adding a run without records changed FirstRecord to %s", a.FirstRecord)
	}
}

package checkpoint_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
)

func wordcountShape(parallelism int) checkpoint.JobShape {
	return checkpoint.JobShape{Type: "wordcount", MaxParallelism: 128, Operators: []checkpoint.OperatorShape{
		{ID: "source", Type: "source connectors.TextFiles", Parallelism: parallelism, OperatorState: true},
		{ID: "count", Type: "keyed", Parallelism: parallelism, States: []checkpoint.StateShape{{Name: "count", Type: "value[int64]"}}},
		{ID: "sink", Type: "sink connectors.FileSink", Parallelism: parallelism, OperatorState: true},
	}}
}

// checkpointOf returns the metadata a job of shape s records, with state in every
// operator.
func checkpointOf(s checkpoint.JobShape) *checkpoint.Metadata {
	m := &checkpoint.Metadata{JobID: "wc", CheckpointID: 7, MaxParallelism: s.MaxParallelism}
	for _, op := range s.Operators {
		st := checkpoint.SubtaskState{Index: 0, Operator: []byte("pos")}
		if op.Type == "keyed" {
			st = checkpoint.SubtaskState{Keyed: []sdk.KeyedStateHandle{{KeyGroups: sdk.KeyGroupRange{End: 64}}}}
		}
		m.Operators = append(m.Operators, checkpoint.OperatorState{ID: op.ID, Parallelism: op.Parallelism, Subtasks: []checkpoint.SubtaskState{st}})
	}
	s.Record(m)
	return m
}

func TestCheckRestore(t *testing.T) {
	m := checkpointOf(wordcountShape(2))
	if m.JobType != "wordcount" || m.Operators[1].Type != "keyed" || len(m.Operators[1].States) != 1 {
		t.Fatalf("Record did not fill the shape: %+v", m)
	}
	for name, c := range map[string]struct {
		job   func(s *checkpoint.JobShape)
		allow bool
		want  string // "" means the restore is allowed
	}{
		"same job":            {func(*checkpoint.JobShape) {}, false, ""},
		"another job type":    {func(s *checkpoint.JobShape) { s.Type = "aggregate" }, false, `taken by a "wordcount" job, this job is a "aggregate" job`},
		"another max-p":       {func(s *checkpoint.JobShape) { s.MaxParallelism = 256 }, false, "max parallelism 128, the job 256"},
		"source type changed": {func(s *checkpoint.JobShape) { s.Operators[0].Type = "source connectors.Generator" }, false, `operator "source" was a source connectors.TextFiles, in this job it is a source connectors.Generator`},
		"state type changed":  {func(s *checkpoint.JobShape) { s.Operators[1].States[0].Type = "list[string]" }, false, `operator "count" keeps state "count" as value[int64], this job declares it as list[string]`},
		"state added": {func(s *checkpoint.JobShape) {
			s.Operators[1].States = append(s.Operators[1].States, checkpoint.StateShape{Name: "x", Type: "value[string]"})
		}, false, ""},
		"operator renamed": {func(s *checkpoint.JobShape) { s.Operators[1].ID = "counter" }, false, "holds state of operators this job does not have: count; restore anyway, dropping it, with --allow-non-restored-state"},
		"renamed, allowed": {func(s *checkpoint.JobShape) { s.Operators[1].ID = "counter" }, true, ""},
		"operator added": {func(s *checkpoint.JobShape) {
			s.Operators = append(s.Operators, checkpoint.OperatorShape{ID: "new", Type: "keyed"})
		}, false, ""},
		"parallelism changed": {func(s *checkpoint.JobShape) { s.Operators[0].Parallelism = 3 }, false, `operator "source" was checkpointed with parallelism 2, the job now has 3`},
		"sink parallelism changed": {func(s *checkpoint.JobShape) {
			s.Operators[0].Redistributable = true
			s.Operators[2].Parallelism = 3
		}, false, `operator "sink" was checkpointed with parallelism 2, the job now has 3 (job.parallelism): its non-keyed state cannot be redistributed (sink connectors.FileSink)`},
		"parallelism changed, redistributable": {func(s *checkpoint.JobShape) {
			for i := range s.Operators {
				s.Operators[i].Parallelism = 3
				s.Operators[i].Redistributable = s.Operators[i].OperatorState
			}
		}, false, ""},
	} {
		t.Run(name, func(t *testing.T) {
			s := wordcountShape(2)
			c.job(&s)
			err := s.CheckRestore(m, c.allow)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			case c.want != "" && !errors.Is(err, checkpoint.ErrIncompatible):
				t.Fatalf("%v does not wrap ErrIncompatible", err)
			}
		})
	}
	// A finished source's state is not restored: its parallelism may change.
	fin := checkpointOf(wordcountShape(2))
	fin.Operators[0].Finished = true
	s3 := wordcountShape(3)
	s3.Operators[2].Redistributable = true
	if err := s3.CheckRestore(fin, false); err != nil {
		t.Fatalf("a finished source at another parallelism refused: %v", err)
	}
	fin.Operators[0].Finished = false
	if err := s3.CheckRestore(fin, false); err == nil || !strings.Contains(err.Error(), `operator "source"`) {
		t.Fatalf("an unfinished source that cannot redistribute at another parallelism: %v", err)
	}
	// Metadata written before shapes were recorded is checked for what it holds.
	old := checkpointOf(wordcountShape(2))
	old.JobType = ""
	for i := range old.Operators {
		old.Operators[i].Type, old.Operators[i].States = "", nil
	}
	s := wordcountShape(2)
	s.Type = "aggregate"
	if err := s.CheckRestore(old, false); err != nil {
		t.Fatalf("old metadata refused: %v", err)
	}
}

package checkpoint

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrIncompatible: a checkpoint does not fit the job that would restore it (another job
// type, an operator of another type, state no operator claims, key groups that cannot be
// remapped). Retrying cannot fix it.
var ErrIncompatible = errors.New("incompatible checkpoint")

// JobShape is what a job looks like to its checkpoints: its type and its operators. The
// runner records it in every checkpoint's metadata and checks a checkpoint against the job
// before restoring it.
type JobShape struct {
	// Type is the job's type (job.type of a built-in job); "" when it declares none.
	Type string
	// MaxParallelism is the job's number of key groups.
	MaxParallelism int
	// Operators are the job's operators: its source, keyed operators and sink.
	Operators []OperatorShape
}

// OperatorShape describes one operator of a job.
type OperatorShape struct {
	// ID is the operator's id; its state is saved under it.
	ID string
	// Type says what the operator is: "source <Go type of the source>", "keyed" or
	// "sink <Go type of the sink>". Two operators with one id but another type cannot
	// share state.
	Type string
	// Parallelism is the operator's number of subtasks.
	Parallelism int
	// States are the keyed states the operator declares.
	States []StateShape
	// OperatorState says the operator keeps non-keyed state (source positions, sink
	// transactions) besides its keyed state.
	OperatorState bool
	// Redistributable says the operator's non-keyed state can be spread over another
	// parallelism (its source or sink is a dataflow.Redistributor), so a restore with
	// another parallelism is allowed.
	Redistributable bool
}

// StateShape is one keyed state of an operator: its name and its type (for example
// "value[int64]").
type StateShape struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Record fills the job's shape into m: its type and each operator's type and states.
func (s JobShape) Record(m *Metadata) {
	m.JobType = s.Type
	for i := range m.Operators {
		if op := s.operator(m.Operators[i].ID); op != nil {
			m.Operators[i].Type = op.Type
			m.Operators[i].States = append([]StateShape(nil), op.States...)
		}
	}
}

func (s JobShape) operator(id string) *OperatorShape {
	for i := range s.Operators {
		if s.Operators[i].ID == id {
			return &s.Operators[i]
		}
	}
	return nil
}

// CheckRestore reports why the job cannot restore m, wrapping ErrIncompatible: another job
// type, another max parallelism, an operator whose type or state types changed, non-keyed
// state whose parallelism changed of an operator that cannot redistribute it (unless the
// operator had finished), or state of operators the job no longer has (unless
// allowNonRestored, Flink's --allowNonRestoredState). Metadata written before these were
// recorded is checked for what it holds.
func (s JobShape) CheckRestore(m *Metadata, allowNonRestored bool) error {
	what := "checkpoint"
	if m.Savepoint {
		what = "savepoint"
	}
	what = fmt.Sprintf("%s %d of job %q", what, m.CheckpointID, m.JobID)
	if m.JobType != "" && s.Type != "" && m.JobType != s.Type {
		return fmt.Errorf("%s was taken by a %q job, this job is a %q job (job.type): its state cannot be restored here: %w", what, m.JobType, s.Type, ErrIncompatible)
	}
	if m.MaxParallelism != s.MaxParallelism && m.hasKeyedState() {
		return fmt.Errorf("%s has max parallelism %d, the job %d (job.max-parallelism): key groups cannot be remapped on restore (write a savepoint for the new max parallelism with `runner checkpoints rescale-keys`): %w", what, m.MaxParallelism, s.MaxParallelism, ErrIncompatible)
	}
	var unclaimed []string
	for _, op := range m.Operators {
		mine := s.operator(op.ID)
		if mine == nil {
			if op.hasState() {
				unclaimed = append(unclaimed, op.ID)
			}
			continue
		}
		if op.Type != "" && mine.Type != "" && op.Type != mine.Type {
			return fmt.Errorf("%s: operator %q was a %s, in this job it is a %s: %w", what, op.ID, op.Type, mine.Type, ErrIncompatible)
		}
		for _, st := range op.States {
			for _, ms := range mine.States {
				if ms.Name == st.Name && ms.Type != st.Type {
					return fmt.Errorf("%s: operator %q keeps state %q as %s, this job declares it as %s: %w", what, op.ID, st.Name, st.Type, ms.Type, ErrIncompatible)
				}
			}
		}
		if mine.OperatorState && !mine.Redistributable && !op.Finished && op.Parallelism != mine.Parallelism && op.HasOperatorState() {
			return fmt.Errorf("%s: operator %q was checkpointed with parallelism %d, the job now has %d (job.parallelism): its non-keyed state cannot be redistributed (%s): %w", what, op.ID, op.Parallelism, mine.Parallelism, mine.Type, ErrIncompatible)
		}
	}
	if len(unclaimed) > 0 && !allowNonRestored {
		sort.Strings(unclaimed)
		return fmt.Errorf("%s holds state of operators this job does not have: %s; restore anyway, dropping it, with --allow-non-restored-state: %w", what, strings.Join(unclaimed, ", "), ErrIncompatible)
	}
	return nil
}

// hasKeyedState reports whether any subtask of m holds keyed state.
func (m *Metadata) hasKeyedState() bool {
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			if len(st.Keyed) > 0 {
				return true
			}
		}
	}
	return false
}

// hasState reports whether any subtask of op holds state.
func (op *OperatorState) hasState() bool {
	for _, st := range op.Subtasks {
		if len(st.Operator) > 0 || len(st.Keyed) > 0 {
			return true
		}
	}
	return false
}

// HasOperatorState reports whether any subtask of op holds non-keyed state.
func (op *OperatorState) HasOperatorState() bool {
	for _, st := range op.Subtasks {
		if len(st.Operator) > 0 {
			return true
		}
	}
	return false
}

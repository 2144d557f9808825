package dataflow

import (
	"fmt"

	"github.com/flowstate/flowstate/runtime/checkpoint"
)

// Shape describes the job to its checkpoints: its type, and each operator's id, type,
// parallelism and declared states, and whether its source and sink can redistribute their
// state over another parallelism (Redistributor). Every checkpoint records it; a restore checks the
// checkpoint against it (checkpoint.JobShape.CheckRestore).
func (j *Job) Shape() checkpoint.JobShape {
	s := checkpoint.JobShape{Type: j.Type, MaxParallelism: j.MaxParallelism}
	if j.source != nil {
		s.Operators = append(s.Operators, checkpoint.OperatorShape{
			ID: j.sourceID, Type: fmt.Sprintf("source %T", unwrapped(j.source)), Parallelism: j.Parallelism, OperatorState: true,
			Redistributable: redistributable(j.source),
		})
	}
	for _, st := range j.stages[min(1, len(j.stages)):] {
		op := checkpoint.OperatorShape{ID: st.id, Type: "keyed", Parallelism: j.Parallelism}
		for _, d := range st.states {
			op.States = append(op.States, checkpoint.StateShape{Name: d.StateName(), Type: d.StateType()})
		}
		s.Operators = append(s.Operators, op)
	}
	if j.sink != nil {
		s.Operators = append(s.Operators, checkpoint.OperatorShape{
			ID: SinkID, Type: fmt.Sprintf("sink %T", unwrapped(j.sink)), Parallelism: j.Parallelism, OperatorState: true,
			Redistributable: redistributable(j.sink),
		})
	}
	return s
}

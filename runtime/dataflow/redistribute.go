package dataflow

import (
	"context"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/restart"
)

// Redistributor is implemented by sources and sinks whose non-keyed subtask states can be
// spread over another number of subtasks, as Flink redistributes the split lists of its
// sources: when a job is restored with another parallelism than its checkpoint's, the
// states of every old subtask go through Redistribute, and new subtask i opens with the
// i-th state it returns. A source or sink that is no Redistributor keeps a job with
// non-keyed state at the parallelism it was checkpointed with.
type Redistributor interface {
	// Redistribute returns the states of parallelism subtasks that together hold exactly
	// what states held (one per old subtask, in subtask order; nil for a subtask that
	// saved none): each unread part of the input, each pending transaction, in exactly
	// one of them. An error names what it could not read.
	Redistribute(states [][]byte, parallelism int) ([][]byte, error)
}

// redistributable reports whether c (the job's source or sink) can spread its state over
// another parallelism.
func redistributable(c any) bool {
	_, ok := c.(Redistributor)
	return ok
}

// operatorStates returns the non-keyed state each of the job's subtasks of operator id (its
// source or sink c) opens with: none for a fresh start, the checkpoint's at the same
// parallelism, and what c's Redistribute makes of it at another one. A checkpoint at
// another parallelism whose operator keeps non-keyed state it cannot redistribute is
// refused (the restore checks refuse it before, see checkpoint.JobShape.CheckRestore).
func (a *attempt) operatorStates(id string, c any) ([][]byte, error) {
	p := a.job.Parallelism
	out := make([][]byte, p)
	if a.env.Restore == nil {
		return out, nil
	}
	os := a.env.Restore.Operator(id)
	if os == nil || !os.HasOperatorState() {
		return out, nil
	}
	old := make([][]byte, os.Parallelism)
	for _, st := range os.Subtasks {
		if st.Index < 0 || st.Index >= os.Parallelism {
			return nil, restart.Permanent(fmt.Errorf("operator %q: checkpoint %d holds the state of subtask %d, but the operator had %d subtasks", id, a.env.Restore.CheckpointID, st.Index, os.Parallelism))
		}
		old[st.Index] = st.Operator
	}
	if os.Parallelism == p {
		return old, nil
	}
	r, ok := c.(Redistributor)
	if !ok {
		return nil, restart.Permanent(fmt.Errorf("operator %q was checkpointed with parallelism %d, the job now has %d: its non-keyed state cannot be redistributed (%T is no dataflow.Redistributor)", id, os.Parallelism, p, c))
	}
	states, err := r.Redistribute(old, p)
	if err != nil {
		return nil, restart.Permanent(fmt.Errorf("operator %q: redistribute the state of %d subtasks of checkpoint %d over %d: %w", id, os.Parallelism, a.env.Restore.CheckpointID, p, err))
	}
	if len(states) != p {
		return nil, restart.Permanent(fmt.Errorf("operator %q: %T redistributed the state of %d subtasks into %d states, want %d", id, c, os.Parallelism, len(states), p))
	}
	a.log.Info("redistributed operator state", "operator", id, "checkpoint", a.env.Restore.CheckpointID, "from", os.Parallelism, "to", p)
	return states, nil
}

// restoredFinished reports whether the restored checkpoint says the job's source had
// finished (checkpoint.OperatorState.Finished): its subtasks do not read again.
func (a *attempt) restoredFinished() bool {
	if a.env.Restore == nil {
		return false
	}
	os := a.env.Restore.Operator(a.job.sourceID)
	return os != nil && os.Finished
}

// markFinished records in m that the job's source has finished: m is the savepoint of a
// drain, or a checkpoint of an attempt that restored a finished source. (The final
// checkpoint of a job whose input ended is not marked: its positions are at the end of the
// input, and a job restored from it reads what the input gained since.)
func (a *attempt) markFinished(m *checkpoint.Metadata) {
	if os := m.Operator(a.job.sourceID); os != nil {
		os.Finished = true
	}
}

// finishedReader is a subtask of a finished source: its input has ended. It has no
// position: the checkpoints of the attempt mark the source finished (markFinished).
type finishedReader struct{}

func (finishedReader) Read(context.Context, int, func(any)) error { return io.EOF }
func (finishedReader) Position() ([]byte, error)                  { return nil, nil }
func (finishedReader) Close() error                               { return nil }

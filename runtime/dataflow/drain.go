package dataflow

import (
	"errors"
	"fmt"
)

// Draining is Flink's `stop --drain`: the sources end their input where they are, as if it
// ended there; every record they emitted is processed and reaches the sinks; the job's
// final checkpoint is the request's savepoint, and it records the source as finished
// (checkpoint.OperatorState.Finished), so a job restored from it finishes at once. As
// Flink notifies the completion of the synchronous savepoint of a stop-with-savepoint, the
// sinks commit that savepoint's transactions; Run replies to the request only once they
// did, and returns nil: the job finished.

// startDrain makes the sources end their input for request req (Drain set).
func (a *attempt) startDrain(req *SavepointRequest) error {
	if a.drainReq != nil {
		return errors.New("the job is already draining")
	}
	a.drainReq = req
	close(a.drain)
	a.log.Info("draining: the sources end their input; the final checkpoint is a savepoint", "job", a.job.Name)
	return nil
}

// replyDrain answers the drain request the attempt served, if any, as Run returns err.
func (a *attempt) replyDrain(err error) {
	req := a.drainReq
	switch {
	case req == nil:
	case err != nil:
		req.Reply <- SavepointResult{Err: fmt.Errorf("the drain did not complete: %w", err)}
	case a.drained == nil:
		req.Reply <- SavepointResult{Err: errors.New("the job's input ended before it was drained: it finished with its final checkpoint, and no savepoint was taken")}
	default:
		req.Reply <- SavepointResult{Location: *a.drained}
	}
}

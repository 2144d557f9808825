package dataflow

import "context"

// Rewinder is implemented by sinks whose committed output records which checkpoint
// committed it. A job restored from checkpoint N must not keep output committed after N:
// the restored job produces those records again.
type Rewinder interface {
	// RewindTo moves the output committed after checkpoint id (id 0: all committed
	// output) aside, where readers of the output ignore it; nothing is deleted. It
	// returns how many files it moved and where to; none moved: 0 and "".
	RewindTo(ctx context.Context, id int64) (moved int, where string, err error)
}

// RewindOutput moves the output the job's sink committed after checkpoint id aside (see
// Rewinder); a sink that is no Rewinder is left alone.
func (j *Job) RewindOutput(ctx context.Context, id int64) (moved int, where string, err error) {
	r, ok := j.sink.(Rewinder)
	if !ok {
		return 0, "", nil
	}
	return r.RewindTo(ctx, id)
}

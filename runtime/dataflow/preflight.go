package dataflow

import (
	"context"
	"fmt"

	"github.com/flowstate/flowstate/runtime/restart"
)

// Preflighter is implemented by sources and sinks that can find, before a job starts,
// mistakes that restarting cannot fix: an input that does not exist, an output that
// cannot be written.
type Preflighter interface {
	// Preflight checks what the connector will need; an error names the path (and the
	// setting it comes from) and what is wrong with it.
	Preflight(ctx context.Context) error
}

// Rewinder is implemented by sinks whose committed output records which checkpoint
// committed it. A job restored from checkpoint N must not keep output committed after N:
// the restored job produces those records again.
type Rewinder interface {
	// RewindTo moves the output committed after checkpoint id (id 0: all committed
	// output) aside, where readers of the output ignore it; nothing is deleted. It
	// returns how many files it moved and where to; none moved: 0 and "".
	RewindTo(ctx context.Context, id int64) (moved int, where string, err error)
}

// Preflight runs the Preflight checks of the job's source and sink; a failure is
// permanent (restart.Permanent).
func (j *Job) Preflight(ctx context.Context) error {
	for _, c := range []any{j.source, j.sink} {
		if p, ok := c.(Preflighter); ok {
			if err := p.Preflight(ctx); err != nil {
				return restart.Permanent(fmt.Errorf("job %q: %w", j.Name, err))
			}
		}
	}
	return nil
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

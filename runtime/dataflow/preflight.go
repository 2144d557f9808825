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

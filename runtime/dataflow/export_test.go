package dataflow

import (
	"context"
	"runtime"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// Build builds an attempt of job, every subtask and the exchanges between them, without
// running it, and returns the function that releases what it opened.
func Build(ctx context.Context, job *Job, env Env) (release func(), err error) {
	env.Logger = hclog.NewNullLogger()
	a := newAttempt(job, &env)
	closers, err := a.build(ctx)
	return func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
		runtime.KeepAlive(a) // what build allocated is live until here
	}, err
}

// SetMachineMemory makes the memory check see n bytes available until the test ends.
func SetMachineMemory(t testing.TB, n int64) {
	prev := machineMemory
	machineMemory = func() (int64, string) { return n, "set by the test" }
	t.Cleanup(func() { machineMemory = prev })
}

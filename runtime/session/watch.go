package session

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Watch cancels an attempt (cancel, with the exit as its cause) when one of the session's
// plugin processes exits: it crashed, was killed, or pluginhost killed it because it
// missed its heartbeats (heartbeat.timeout). stop ends the watching and returns once it
// has ended: cancel is not called after stop returns, and no goroutine of Watch is left.
// ctx ending ends the watching too.
func (s *Session) Watch(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, in := range s.Plugins() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-in.Done():
				cancel(fmt.Errorf("plugin %s exited: %w", in.Name(), in.ExitError()))
			case <-done:
			case <-ctx.Done():
			}
		}()
	}
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}

// KillStuck kills the plugin process that keeps a cancelled attempt from ending, called
// for the n-th task.cancellation.timeout (timeout) the attempt outlasted: the state
// backend's after the first, the checkpoint storage's after a second. Every call still
// waiting on it then fails at once, and Ensure starts it again. A plugin served in-process
// cannot be killed.
func (s *Session) KillStuck(n int, timeout time.Duration) {
	in := s.backend
	if n == 2 {
		in = s.storage
	}
	if n > 2 || in.Pid() == 0 || !in.Alive() {
		return
	}
	s.log.Warn("the job's attempt has not ended "+(time.Duration(n)*timeout).String()+" after it was cancelled (task.cancellation.timeout): killing the plugin that holds it up",
		"plugin", in.Name(), "pid", in.Pid())
	in.Kill()
}

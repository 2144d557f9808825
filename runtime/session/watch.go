package session

import (
	"context"
	"fmt"
	"time"
)

// Watch cancels an attempt (cancel, with the exit as its cause) when one of the session's
// plugin processes exits: it crashed, was killed, or pluginhost killed it because it
// missed its heartbeats (heartbeat.timeout). stop ends the watching; so does ctx.
func (s *Session) Watch(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	done := make(chan struct{})
	for _, in := range s.Plugins() {
		go func() {
			select {
			case <-in.Done():
				cancel(fmt.Errorf("plugin %s exited: %w", in.Name(), in.ExitError()))
			case <-done:
			case <-ctx.Done():
			}
		}()
	}
	return func() { close(done) }
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

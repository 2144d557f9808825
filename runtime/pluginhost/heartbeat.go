package pluginhost

import (
	"context"
	"fmt"
	"time"

	"github.com/flowstate/flowstate/sdk/host"
)

// heartbeat is an instance's heartbeat settings (heartbeat.interval, heartbeat.timeout),
// as Flink's TaskManager heartbeats: the host pings a running plugin every interval, and
// kills it when it has not answered for timeout. A stopped (SIGSTOP), wedged or
// overloaded process answers nothing; the runner then recovers as from a crash.
type heartbeat struct {
	every, timeout time.Duration
}

// start pings p until stop is called or p exits, and kills p on behalf of in when it
// misses its heartbeats. stop returns once the pinging has ended.
func (hb heartbeat) start(in *Instance, p *host.Plugin) (stop func()) {
	if hb.every <= 0 || hb.timeout <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		hb.run(ctx, in, p)
	}()
	return func() {
		cancel()
		<-ended
	}
}

// run is the heartbeat loop of one process.
func (hb heartbeat) run(ctx context.Context, in *Instance, p *host.Plugin) {
	answered := time.Now()
	wait := time.NewTimer(hb.every)
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.Done():
			return
		case <-wait.C:
		}
		deadline := answered.Add(hb.timeout)
		pctx, cancel := context.WithDeadline(ctx, deadline)
		err := p.Ping(pctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			answered = time.Now()
			wait.Reset(hb.every)
			continue
		case time.Now().Before(deadline):
			// A failed ping that came back before the deadline (the process exiting, a
			// broken connection): ask again, the deadline stands.
			wait.Reset(min(hb.every, time.Until(deadline)))
			continue
		}
		if p.Exited() {
			return
		}
		reason := fmt.Sprintf("no heartbeat answer for %s (heartbeat.timeout)", hb.timeout)
		in.logger.Error(fmt.Sprintf("plugin %s (pid %d) did not answer its heartbeats for %s (heartbeat.timeout): killing it",
			in.name, p.Pid(), hb.timeout), "plugin", in.name, "pid", p.Pid(), "heartbeat.timeout", hb.timeout, "error", err)
		in.mu.Lock()
		if in.proc == p {
			in.killReason = reason
		}
		in.mu.Unlock()
		p.KillNow()
		return
	}
}

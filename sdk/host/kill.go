package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/health/grpc_health_v1"
)

// KillGrace is how long Kill lets a plugin exit after asking it to, before SIGKILL.
const KillGrace = 2 * time.Second

// Kill stops the plugin: it asks it to exit (go-plugin's Shutdown call) and sends SIGKILL
// once KillGrace has passed without the process exiting, whether or not it answered: a
// stopped or deadlocked process never does. It returns once the process is gone; on a
// plugin that has exited already it only releases what the host kept for it.
func (p *Plugin) Kill() { p.kill(KillGrace) }

// KillNow sends the plugin SIGKILL at once, without asking it to exit, and returns once
// the process is gone: for a plugin that no longer answers.
func (p *Plugin) KillNow() { p.kill(0) }

func (p *Plugin) kill(grace time.Duration) {
	p.killMu.Lock()
	defer p.killMu.Unlock()
	if grace <= 0 {
		p.sigkill()
	}
	// go-plugin's Kill sends Shutdown without a deadline and then waits for the process
	// and its output readers: it returns once the process is gone, which SIGKILL forces.
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.client.Kill()
	}()
	if grace > 0 {
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
			p.sigkill()
		}
	}
	<-done
}

// sigkill sends SIGKILL to the plugin process, if it was started and not yet reaped.
func (p *Plugin) sigkill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
}

// Ping asks the plugin's gRPC health service whether it serves (go-plugin serves it in
// every plugin). It fails when ctx ends first: a stopped or wedged process never answers.
func (p *Plugin) Ping(ctx context.Context) error {
	gc, ok := p.proto.(*plugin.GRPCClient)
	if !ok {
		return fmt.Errorf("plugin %s: no gRPC connection to ping", p.info.Path)
	}
	r, err := grpc_health_v1.NewHealthClient(gc.Conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
	if err != nil {
		return fmt.Errorf("plugin %s (pid %d): health check: %w", p.info.Path, p.Pid(), err)
	}
	if r.Status != grpc_health_v1.HealthCheckResponse_SERVING {
		return fmt.Errorf("plugin %s (pid %d): health check: %w: %s", p.info.Path, p.Pid(), errNotServing, r.Status)
	}
	return nil
}

var errNotServing = errors.New("not serving")

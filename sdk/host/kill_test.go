package host_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// TestKillEndsAStoppedPlugin stops a plugin with SIGSTOP: it answers no ping and never
// the Shutdown call Kill sends first, yet Kill returns, and the process is gone by then.
func TestKillEndsAStoppedPlugin(t *testing.T) {
	for _, kill := range []string{"Kill", "KillNow"} {
		t.Run(kill, func(t *testing.T) {
			p := startPlugin(t, "mem")
			if err := p.Ping(ctxT(t)); err != nil {
				t.Fatalf("ping of a running plugin: %v", err)
			}
			if err := syscall.Kill(p.Pid(), syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { syscall.Kill(p.Pid(), syscall.SIGKILL) })
			waitStopped(t, p.Pid())
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := p.Ping(ctx); err == nil {
				t.Fatal("a stopped plugin answered a ping")
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if kill == "Kill" {
					p.Kill()
				} else {
					p.KillNow()
				}
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatalf("%s of a stopped plugin did not return", kill)
			}
			if !p.Exited() || processAlive(p.Pid()) {
				t.Fatalf("%s returned while the plugin process %d runs", kill, p.Pid())
			}
		})
	}
}

// waitStopped waits until pid, a child of this process, has stopped: SIGSTOP takes effect
// asynchronously, and wait4 with WUNTRACED returns once it has. It reports the stop to
// this wait alone: the host's wait for the plugin's exit does not see it.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || !ws.Stopped() {
			t.Fatalf("waiting for process %d to stop: %v (status %#x)", pid, err, uint32(ws))
		}
		return
	}
}

package pluginhost_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/runtime/pluginhost"
)

// TestHeartbeatKillsAStoppedPlugin stops a plugin with SIGSTOP: the host notices the
// missing heartbeat answers, logs the plugin, its pid and heartbeat.timeout, and kills it;
// ExitError says why; Restart brings a working process back.
func TestHeartbeatKillsAStoppedPlugin(t *testing.T) {
	var logs testwait.Buffer
	h := pluginhost.New(pluginhost.Options{
		Dir:               pluginDir(t, "mem"),
		Logger:            hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn}),
		HeartbeatInterval: 20 * time.Millisecond, HeartbeatTimeout: time.Second,
	})
	defer h.Close()
	in, err := h.Open(ctxT(t), "mem")
	if err != nil {
		t.Fatal(err)
	}
	pid := in.Pid()
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-in.Done():
	case <-time.After(time.Minute):
		t.Fatalf("a stopped plugin was not killed; log:\n%s", logs.String())
	}
	want := fmt.Sprintf("plugin mem (pid %d) did not answer its heartbeats for 1s (heartbeat.timeout): killing it", pid)
	if !strings.Contains(logs.String(), want) {
		t.Errorf("log does not say %q:\n%s", want, logs.String())
	}
	if err := in.ExitError(); err == nil || !strings.Contains(err.Error(), "heartbeat.timeout") || !strings.Contains(err.Error(), "killed") {
		t.Errorf("ExitError = %v, want the heartbeat and the signal", err)
	}
	if err := in.Restart(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if !in.Alive() || in.Pid() == pid || in.ExitError() != nil {
		t.Errorf("after Restart: alive %v, pid %d (was %d), exit error %v", in.Alive(), in.Pid(), pid, in.ExitError())
	}
}

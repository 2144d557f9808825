package natstest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/testwait"
)

// scriptEnv is the environment for scripts/natsserver.sh and with-nats.sh with the binary
// this test process uses in a cache dir of the test's own (so the scripts build nothing),
// their state in another, and FLOWSTATE_NATS_* of the caller's environment left out.
func scriptEnv(t *testing.T) (env []string, state string) {
	t.Helper()
	cache, state := t.TempDir(), t.TempDir()
	if err := os.Symlink(Binary(t), filepath.Join(cache, "nats-server")); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLOWSTATE_NATS_") {
			env = append(env, kv)
		}
	}
	return append(env, "FLOWSTATE_NATS_DIR="+cache, "FLOWSTATE_NATS_STATE="+state, "TMPDIR="+state), state
}

// TestScriptStartsAndStopsAServer: scripts/natsserver.sh start prints, last, the URL of a
// JetStream server on a free port of 127.0.0.1; stop kills it and removes its store dir.
func TestScriptStartsAndStopsAServer(t *testing.T) {
	env, state := scriptEnv(t)
	script := filepath.Join("..", "..", "scripts", "natsserver.sh")
	run := func(arg string) string {
		cmd := exec.Command(script, arg)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("natsserver.sh %s: %v\n%s", arg, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { run("stop") })
	out := strings.TrimSpace(run("start"))
	url := out[strings.LastIndexByte(out, '\n')+1:]
	if !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Fatalf("start printed %q last, want nats://127.0.0.1:PORT", url)
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatalf("JetStream on %s: %v", url, err)
	}
	pidText, err := os.ReadFile(filepath.Join(state, "nats-server.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	store, _ := os.ReadFile(filepath.Join(state, "nats-server.storedir"))
	run("stop")
	testwait.For(t, "the script's server to be gone after stop", 10*time.Second, func() error { return gone(pid) })
	if _, err := os.Stat(strings.TrimSpace(string(store))); !os.IsNotExist(err) {
		t.Fatalf("store dir %s after stop: %v", store, err)
	}
}

// TestWithNATSExportsTheBinary: scripts/with-nats.sh runs its command with
// FLOWSTATE_NATS_SERVER naming the binary natsserver.sh builds (here, finds cached).
func TestWithNATSExportsTheBinary(t *testing.T) {
	env, _ := scriptEnv(t)
	cmd := exec.Command(filepath.Join("..", "..", "scripts", "with-nats.sh"), "sh", "-c", `echo "server=$FLOWSTATE_NATS_SERVER"`)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("with-nats.sh: %v\n%s", err, out)
	}
	want := "server=" + filepath.Join(envValue(env, "FLOWSTATE_NATS_DIR"), "nats-server")
	if strings.TrimSpace(string(out)) != want {
		t.Fatalf("with-nats.sh gave its command %q, want %q", out, want)
	}
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

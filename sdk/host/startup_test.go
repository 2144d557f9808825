package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/sdk/host"
)

func startErr(t *testing.T, cfg host.Config) error {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	p, err := host.Start(context.Background(), cfg)
	if err == nil {
		p.Kill()
		t.Fatalf("%s started", cfg.Path)
	}
	if !strings.Contains(err.Error(), cfg.Path) {
		t.Errorf("error does not name the file %s: %v", cfg.Path, err)
	}
	return err
}

func TestStartErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	noexec := filepath.Join(dir, "flowstate-plugin-noexec")
	if err := os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := startErr(t, host.Config{Path: noexec}); !errors.Is(err, host.ErrNotExecutable) {
		t.Errorf("non-executable: %v", err)
	}
	if err := startErr(t, host.Config{Path: filepath.Join(dir, "missing")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}

	// Both fail on what the program does, not on the start timeout, which is long here.
	const long = 10 * time.Minute
	start := time.Now()
	err := startErr(t, host.Config{Path: pluginPath("junk"), StartTimeout: long})
	if !errors.Is(err, host.ErrNotPlugin) || !strings.Contains(err.Error(), "hello, I am not a plugin") {
		t.Errorf("junk on stdout: %v", err)
	}

	err = startErr(t, host.Config{Path: pluginPath("crash"), StartTimeout: long})
	if !errors.Is(err, host.ErrExited) || !strings.Contains(err.Error(), "exit status 3") ||
		!strings.Contains(err.Error(), "fatal: cannot open the state directory") || !strings.Contains(err.Error(), "crash line 7\n") ||
		strings.Contains(err.Error(), "crash line 6\n") {
		t.Errorf("crash at start-up: %v, want exit status 3 and the last 10 stderr lines", err)
	}
	if d := time.Since(start); d >= long {
		t.Errorf("failing start-ups took %s: they waited for the start timeout", d)
	}

	// A program that never answers: the start timeout.
	sleeper := filepath.Join(dir, "flowstate-plugin-sleeper")
	if err := os.WriteFile(sleeper, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = startErr(t, host.Config{Path: sleeper, StartTimeout: 500 * time.Millisecond})
	if !errors.Is(err, host.ErrNotPlugin) {
		t.Errorf("silent program: %v", err)
	}
}

func TestChecksumPin(t *testing.T) {
	path := pluginPath("mem")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	actual := hex.EncodeToString(sum[:])
	wrong := strings.Repeat("ab", 32)
	err = startErr(t, host.Config{Path: path, SHA256: wrong})
	if !errors.Is(err, host.ErrChecksumMismatch) || !strings.Contains(err.Error(), wrong) || !strings.Contains(err.Error(), actual) {
		t.Errorf("checksum mismatch: %v, want both hashes", err)
	}
	if err := startErr(t, host.Config{Path: path, SHA256: "xyz"}); !strings.Contains(err.Error(), `"xyz"`) {
		t.Errorf("bad pin: %v", err)
	}
	p := startPlugin(t, "mem", func(c *host.Config) { c.SHA256 = strings.ToUpper(actual) })
	if p.Info().Name != "mem" {
		t.Errorf("pinned plugin info = %+v", p.Info())
	}
}

func TestProtocolNegotiation(t *testing.T) {
	p := startPlugin(t, "mem", func(c *host.Config) { c.Protocols = []int{1, 2} })
	if got := p.Info().Protocol; got != 1 {
		t.Errorf("negotiated protocol %d, want 1", got)
	}
	err := startErr(t, host.Config{Path: pluginPath("memv3"), Protocols: []int{1, 2}})
	if !errors.Is(err, host.ErrNoCommonProtocol) || !strings.Contains(err.Error(), "[3]") || !strings.Contains(err.Error(), "[1 2]") {
		t.Errorf("no common version: %v, want both sets named", err)
	}
}

func TestKillAndExitError(t *testing.T) {
	p := startPlugin(t, "mem")
	if p.Exited() || p.ExitError() != nil || p.Pid() <= 0 {
		t.Fatalf("fresh plugin: exited=%v err=%v pid=%d", p.Exited(), p.ExitError(), p.Pid())
	}
	if err := syscallKill(p.Pid()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(time.Minute):
		t.Fatal("Done not closed after the plugin was killed")
	}
	err := p.ExitError()
	if err == nil || !strings.Contains(err.Error(), "killed") || !strings.Contains(err.Error(), p.Info().Path) {
		t.Errorf("ExitError = %v, want the signal and the path", err)
	}
	b, _ := p.StateBackend()
	if _, err := b.CreateKeyedStateBackend(ctxT(t), paramsAll()); err == nil {
		t.Error("call to a dead plugin succeeded")
	}
	p.Kill() // no-op on a dead plugin
}

func TestNoisyPluginWorks(t *testing.T) {
	p := startPlugin(t, "noisy", func(c *host.Config) {
		c.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: discard{}})
	})
	kb := newKeyed(t, p, allGroups)
	for i := 0; i < 200; i++ {
		if _, err := kb.Get(ctxT(t), [][]byte{key(1, "x")}); err != nil {
			t.Fatal(err)
		}
	}
	p.Kill() // returns once the process is gone, after at most host.KillGrace and a SIGKILL
	if !p.Exited() {
		t.Error("plugin runs after Kill")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

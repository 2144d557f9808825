package e2e

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/testplugins"
)

var (
	faultDirOnce sync.Once
	faultDir     string
	faultDirErr  error
)

// faultPluginDir returns a plugin directory holding the built-in plugins and the fault
// test plugins (testplugins.FaultNames plus junk and noisy) and a "silent" plugin that
// never answers its handshake. It is built once per test process and removed by TestMain.
func faultPluginDir(t *testing.T) string {
	t.Helper()
	builtins := testbin.PluginDir(t)
	faultDirOnce.Do(func() {
		faultDir, faultDirErr = os.MkdirTemp("", "flowstate-e2e-plugins-")
		if faultDirErr != nil {
			return
		}
		if faultDirErr = copyDir(builtins, faultDir); faultDirErr != nil {
			return
		}
		names := append([]string{"junk", "noisy"}, testplugins.FaultNames...)
		if faultDirErr = testplugins.BuildNamed(faultDir, names...); faultDirErr != nil {
			return
		}
		silent := filepath.Join(faultDir, testplugins.Prefix+"silent")
		faultDirErr = os.WriteFile(silent, []byte("#!/bin/sh\nexec sleep 60\n"), 0o755)
	})
	if faultDirErr != nil {
		t.Fatalf("fault plugin directory: %v", faultDirErr)
	}
	return faultDir
}

// copyDir copies the regular files of src into dst, keeping them executable.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}

// TestMain gives the test process and every runner and plugin it starts a temporary
// directory and a runtime directory of their own (TMPDIR, XDG_RUNTIME_DIR): the places a
// runner uses when a configuration names none (leveldb's default localdir, the local leases
// of a storage without a lease store) are then never those of a user's own runs.
func TestMain(m *testing.M) {
	private, err := os.MkdirTemp("", "flowstate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for key, sub := range map[string]string{"TMPDIR": "tmp", "XDG_RUNTIME_DIR": "run"} {
		dir := filepath.Join(private, sub)
		if err := os.Mkdir(dir, 0o700); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Setenv(key, dir)
	}
	code := m.Run()
	if faultDir != "" {
		os.RemoveAll(faultDir)
	}
	os.RemoveAll(private)
	os.Exit(code)
}

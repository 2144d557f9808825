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

func TestMain(m *testing.M) {
	// The runners' control endpoint token files go to a directory of this test process
	// ($XDG_RUNTIME_DIR/flowstate), never to the user's own.
	runtimeDir, err := os.MkdirTemp("", "flowstate-e2e-run-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	code := m.Run()
	if faultDir != "" {
		os.RemoveAll(faultDir)
	}
	os.RemoveAll(runtimeDir)
	os.Exit(code)
}

// Package testbin gives tests the runner and plugin binaries: the ones `make build` put in
// $FLOWSTATE_BIN when that is set, otherwise binaries built once per test process; and a
// headless Chromium for the tests of the monitor's web page (chromium.go).
//
// It builds the binaries with go build and must never import a package of this repository:
// the plugins' tests use it, and a plugin, its tests included, reaches neither the runtime
// nor another plugin.
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// Plugins are the built-in plugins, by name: the directories of plugins/ that hold a
// plugin's main package (plugins/<name>/main.go). testbin finds them on disk rather than
// through plugins/builtin, so that a plugin's tests, which use testbin, reach no other
// plugin's code.
var Plugins = pluginNames()

// root is the repository's root directory.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func pluginNames() []string {
	entries, err := os.ReadDir(filepath.Join(root(), "plugins"))
	if err != nil {
		panic(fmt.Sprintf("testbin: the plugins directory: %v", err))
	}
	var names []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(root(), "plugins", e.Name(), "main.go")); e.IsDir() && err == nil {
			names = append(names, e.Name())
		}
	}
	return names
}

var (
	once   sync.Once
	binDir string
	errB   error
)

// Dir returns the directory holding runner and plugins/, building them if needed.
func Dir(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		if d := os.Getenv("FLOWSTATE_BIN"); d != "" {
			binDir = d
			return
		}
		binDir, errB = build()
	})
	if errB != nil {
		t.Fatalf("building binaries: %v", errB)
	}
	return binDir
}

// Runner returns the path of the runner binary.
func Runner(t testing.TB) string { return filepath.Join(Dir(t), "runner") }

// PluginDir returns the directory of the built-in plugins.
func PluginDir(t testing.TB) string { return filepath.Join(Dir(t), "plugins") }

// Plugin returns the path of the named built-in plugin binary.
func Plugin(t testing.TB, name string) string {
	return filepath.Join(PluginDir(t), "flowstate-plugin-"+name)
}

// ownerFile names, in a build directory, the process the binaries were built for.
const ownerFile = "owner.pid"

func build() (string, error) {
	root := root()
	removeOrphans()
	dir, err := os.MkdirTemp("", "flowstate-bin-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return "", err
	}
	targets := map[string]string{filepath.Join(dir, "runner"): "./cmd/runner"}
	for _, p := range Plugins {
		targets[filepath.Join(dir, "plugins", "flowstate-plugin-"+p)] = "./plugins/" + p
	}
	targets[filepath.Join(dir, "plugins", "flowstate-plugin-boltdb")] = "thirdparty"
	for out, pkg := range targets {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = root
		if pkg == "thirdparty" { // the third-party example is a module of its own
			cmd = exec.Command("go", "build", "-o", out, ".")
			cmd.Dir = filepath.Join(root, "examples", "thirdparty")
		}
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
		}
	}
	return dir, nil
}

// removeOrphans removes the build directories of test processes that have ended: a test
// process has no hook at its exit, so each build cleans up after the ones before it,
// rather than leaving ~130 MB in the temporary directory per `go test` of a package.
func removeOrphans() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "flowstate-bin-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue // not ours to judge: no owner recorded
		}
		pid, err := strconv.Atoi(string(b))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}

package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/internal/testplugins"
	"github.com/flowstate/flowstate/sdk/host"
)

// pluginDir holds the test plugins, built once by TestMain.
var pluginDir string

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		runHostHelper()
		return
	}
	dir, err := os.MkdirTemp("", "flowstate-host-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := testplugins.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	pluginDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func pluginPath(name string) string {
	return filepath.Join(pluginDir, testplugins.Prefix+name)
}

func testLogger(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Warn, Output: testWriter{t}})
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// startPlugin starts a test plugin and kills it when the test ends.
func startPlugin(t testing.TB, name string, mod ...func(*host.Config)) *host.Plugin {
	t.Helper()
	cfg := host.Config{Path: pluginPath(name), Logger: hclog.NewNullLogger()}
	for _, f := range mod {
		f(&cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := host.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(p.Kill)
	return p
}

package host_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/sdk/host"
	"github.com/flowstate/flowstate/sdk/internal/testplugins"
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

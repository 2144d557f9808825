package sdktest

import (
	"context"
	"os"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
	"github.com/hashicorp/go-hclog"
)

// PluginProcess starts the plugin binary at path, configures it with opts and kills it when
// t ends, so that the kit can run against a plugin through its real process boundary.
// The plugin's log lines of level warning and above go to the test's standard error.
func PluginProcess(t *testing.T, path string, opts sdk.Options) *host.Plugin {
	t.Helper()
	ctx := context.Background()
	logger := hclog.New(&hclog.LoggerOptions{Name: "sdktest", Level: hclog.Warn, Output: os.Stderr})
	p, err := host.Start(ctx, host.Config{Path: path, Logger: logger})
	if err != nil {
		t.Fatalf("starting plugin %s: %v", path, err)
	}
	t.Cleanup(p.Kill)
	if err := p.Configure(ctx, opts); err != nil {
		t.Fatalf("configuring plugin %s: %v", path, err)
	}
	return p
}

// ProcessStateBackend starts the plugin binary at path with PluginProcess and returns its
// state backend; it fails t when the plugin serves none.
func ProcessStateBackend(t *testing.T, path string, opts sdk.Options) sdk.StateBackend {
	t.Helper()
	sb, ok := PluginProcess(t, path, opts).StateBackend()
	if !ok {
		t.Fatalf("plugin %s serves no state backend", path)
	}
	processBackends.Store(sb, true)
	t.Cleanup(func() { processBackends.Delete(sb) })
	return sb
}

// ProcessCheckpointStorage starts the plugin binary at path with PluginProcess and returns
// its checkpoint storage; it fails t when the plugin serves none.
func ProcessCheckpointStorage(t *testing.T, path string, opts sdk.Options) sdk.CheckpointStorage {
	t.Helper()
	cs, ok := PluginProcess(t, path, opts).CheckpointStorage()
	if !ok {
		t.Fatalf("plugin %s serves no checkpoint storage", path)
	}
	return cs
}

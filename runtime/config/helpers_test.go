package config

import (
	"testing"

	"github.com/flowstate/flowstate/internal/testcheck"

	"github.com/flowstate/flowstate/sdk"
)

// view is the part of a Config that decides behaviour: everything but messages and lines.
type view struct {
	StateBackend, CheckpointStorage string
	StorageFromBackend              bool
	BackendOptions, StorageOptions  sdk.Options
	Checkpointing                   Checkpointing
	Plugins                         Plugins
	Job                             Job
	Restart                         Restart
	Control                         Control
}

func viewOf(c *Config) view {
	return view{c.StateBackend, c.CheckpointStorage, c.StorageFromBackend, c.BackendOptions, c.StorageOptions,
		c.Checkpointing, c.Plugins, c.Job, c.Restart, c.Control}
}

// mustParse parses YAML as if it were the file /etc/flowstate/config.yaml.
func mustParse(t *testing.T, yaml string) *Config {
	t.Helper()
	c, err := Parse([]byte(yaml), testFile)
	if err != nil {
		t.Fatalf("Parse:\n%s\nerror: %v", yaml, err)
	}
	return c
}

// mustResolve parses and resolves with built-in plugins only.
func mustResolve(t *testing.T, yaml string) *Config {
	t.Helper()
	c := mustParse(t, yaml)
	if err := Resolve(c, nil); err != nil {
		t.Fatalf("Resolve:\n%s\nerror: %v", yaml, err)
	}
	return c
}

const testFile = "/etc/flowstate/config.yaml"

// parseErr parses YAML that must fail and returns the error message.
func parseErr(t *testing.T, yaml string) string {
	t.Helper()
	_, err := Parse([]byte(yaml), testFile)
	if err == nil {
		t.Fatalf("Parse:\n%s\nwant an error, got none", yaml)
	}
	return err.Error()
}

// The shared assertions, under the names these tests use.
var (
	wantContains = testcheck.Contains
	wantEqual    = testcheck.Equal
)

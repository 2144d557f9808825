package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/internal/testbin"
	"github.com/flowstate/flowstate/internal/testplugins"
)

// TestOfflineCommandsKeepQuietAboutPluginsThatStop: an offline command (checkpoints list)
// starts the checkpoint storage plugin and stops it at its end. go-plugin's line for that
// clean stop ("plugin process exited") is left out at the default log level and shown at
// --log-level debug; a plugin that crashes (the crash test plugin, which exits with status 3
// as it starts) is logged at either level.
func TestOfflineCommandsKeepQuietAboutPluginsThatStop(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	writeConfig(t, cfg, map[string]any{
		"execution.checkpointing.storage": "filesystem",
		"execution.checkpointing.dir":     filepath.Join(dir, "checkpoints"),
		"job.name":                        "wc",
		"job.input":                       cfg,
		"job.output":                      filepath.Join(dir, "out"),
	})
	// stderr runs a runner command and returns its standard error, whether it failed or not.
	stderr := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(testbin.Runner(t), args...)
		var b strings.Builder
		cmd.Stderr = &b
		if err := cmd.Run(); err != nil && !errors.As(err, new(*exec.ExitError)) {
			t.Fatal(err)
		}
		return b.String()
	}
	const exited = "plugin process exited"
	list := []string{"checkpoints", "list", "--config", cfg, "--plugin-dir", testbin.PluginDir(t)}
	if out := stderr(list...); strings.Contains(out, exited) {
		t.Errorf("checkpoints list logs its plugin's clean stop:\n%s", out)
	}
	if out := stderr(append(list, "--log-level", "debug")...); !strings.Contains(out, exited) || !strings.Contains(out, "flowstate-plugin-fsstorage") {
		t.Errorf("checkpoints list --log-level debug does not log its plugin's stop:\n%s", out)
	}

	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyDir(testbin.PluginDir(t), plugins); err != nil {
		t.Fatal(err)
	}
	if err := testplugins.BuildNamed(plugins, "crash"); err != nil {
		t.Fatal(err)
	}
	crashing := filepath.Join(dir, "crashing.yaml")
	writeConfig(t, crashing, map[string]any{"execution.checkpointing.storage": "crash", "job.name": "wc", "job.input": cfg, "job.output": filepath.Join(dir, "out")})
	out := stderr("checkpoints", "list", "--config", crashing, "--plugin-dir", plugins)
	if !strings.Contains(out, exited) || !strings.Contains(out, "exit status 3") {
		t.Errorf("checkpoints list hides the plugin that crashed:\n%s", out)
	}
}

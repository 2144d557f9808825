package sdktest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/internal/testplugins"
)

// TestKitThroughPluginProcesses runs the kit against the reference plugin in a process of
// its own (PluginProcess, ProcessStateBackend, ProcessCheckpointStorage), as a plugin
// author's conformance test does with the binary they ship. The binary is refprev
// announcing every addition of the protocol: a plugin of this release.
func TestKitThroughPluginProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the test plugins")
	}
	dir := t.TempDir()
	if err := testplugins.Build(dir); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLOWSTATE_TESTPLUGIN_ANNOUNCE", "pipeline,reads-ahead,local-reads,access-interfaces,remote-files")
	ref := filepath.Join(dir, testplugins.Prefix+"refprev")
	if _, err := os.Stat(ref); err != nil {
		t.Fatal(err)
	}
	t.Run("state backend", func(t *testing.T) {
		StateBackend(t, func(t *testing.T) sdk.StateBackend { return ProcessStateBackend(t, ref, nil) })
	})
	t.Run("checkpoint storage", func(t *testing.T) {
		CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage { return ProcessCheckpointStorage(t, ref, nil) })
	})
}

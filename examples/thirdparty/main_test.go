package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flowstate/flowstate/examples/thirdparty/boltstate"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
	"github.com/flowstate/flowstate/sdk/sdktest"
)

// buildPlugin builds this command as flowstate-plugin-boltdb, the way an author does.
func buildPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "flowstate-plugin-"+boltstate.Name)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build -o %s .: %v", bin, err)
	}
	return bin
}

// TestPluginProcess starts the built binary through the host and runs the conformance kit
// through its process boundary: one binary, both kinds.
func TestPluginProcess(t *testing.T) {
	bin := buildPlugin(t)
	t.Run("ServesBothKinds", func(t *testing.T) {
		p, err := host.Start(context.Background(), host.Config{Path: bin})
		if err != nil {
			t.Fatalf("host.Start(%s): %v", bin, err)
		}
		defer p.Kill()
		info := p.Info()
		want := []sdk.Kind{sdk.KindStateBackend, sdk.KindCheckpointStorage}
		if info.Name != boltstate.Name || info.Version != boltstate.Version || !slices.Equal(info.Kinds, want) {
			t.Fatalf("Info = %+v, want name %q, version %q, kinds %v", info, boltstate.Name, boltstate.Version, want)
		}
		if info.Protocol != host.ProtocolVersion {
			t.Errorf("negotiated protocol %d, want %d", info.Protocol, host.ProtocolVersion)
		}
	})
	opts := func(t *testing.T) sdk.Options {
		return sdk.Options{boltstate.OptionLocalDir: t.TempDir(), sdk.OptionCheckpointDir: t.TempDir()}
	}
	t.Run("CheckpointStorage", func(t *testing.T) {
		sdktest.CheckpointStorage(t, func(t *testing.T) sdk.CheckpointStorage {
			return sdktest.ProcessCheckpointStorage(t, bin, opts(t))
		})
	})
	t.Run("StateBackend", func(t *testing.T) {
		sdktest.StateBackend(t, func(t *testing.T) sdk.StateBackend {
			return sdktest.ProcessStateBackend(t, bin, opts(t))
		})
	})
}

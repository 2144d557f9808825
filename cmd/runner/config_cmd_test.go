package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/sdk"
)

// runConfigCmd runs "runner config ..." and returns its standard output.
func runConfigCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"config"}, args...))
	err := root.Execute()
	return out.String(), err
}

func TestConfigExplainJSON(t *testing.T) {
	out, err := runConfigCmd(t, "explain", "--config", "../../examples/configs/memory-path-old.yaml", "--json", "--plugin-dir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("explain --json is not JSON: %v\n%s", err, out)
	}
	for key, want := range map[string]any{"state_backend": "hashmap", "checkpoint_storage": "jmstorage",
		"checkpoint_dir": "file:///tmp/flowstate-examples/memory-path/checkpoints", "savepoint_dir": ""} {
		if m[key] != want {
			t.Errorf("%s: got %v, want %v", key, m[key], want)
		}
	}
	for _, key := range []string{"deprecations", "warnings"} {
		if _, ok := m[key].([]any); !ok {
			t.Errorf("%s: want an array, got %#v", key, m[key])
		}
	}
}

func TestConfigExplainText(t *testing.T) {
	out, err := runConfigCmd(t, "explain", "--config", "../../examples/configs/rocksdb-fs-new.yaml", "--plugin-dir", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"state backend: leveldb", "checkpoint storage: fsstorage", "leveldb files at /tmp/flowstate-examples/rocksdb-fs/leveldb",
		"A state backend alone is not durable", "Survive losing this machine: no"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

func TestConfigExplainThirdParty(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte("state.backend.type: tikv\nexecution.checkpointing.interval: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	kinds := func(name string) ([]sdk.Kind, error) {
		asked = append(asked, name)
		return []sdk.Kind{sdk.KindStateBackend, sdk.KindCheckpointStorage}, nil
	}
	e, err := explainConfig(context.Background(), &globalFlags{pluginDir: t.TempDir()}, file, kinds)
	if err != nil {
		t.Fatal(err)
	}
	if e.CheckpointStorage != "tikv" || !e.StorageFromBackend || len(asked) != 1 {
		t.Errorf("got storage %q from backend %v, asked %q", e.CheckpointStorage, e.StorageFromBackend, asked)
	}
}

func TestConfigMigrate(t *testing.T) {
	out, err := runConfigCmd(t, "migrate", "--config", "../../examples/configs/rocksdb-memory-old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"state.backend.type: leveldb # was state.backend: rocksdb",
		"execution.checkpointing.storage: jmstorage # implied by the old state.backend: rocksdb"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	c, err := config.Parse([]byte(out), "../../examples/configs/rocksdb-memory-old.yaml")
	if err != nil {
		t.Fatalf("migrated output does not parse: %v", err)
	}
	if len(c.Deprecations) != 0 {
		t.Errorf("migrated output has deprecations %q", c.Deprecations)
	}
	if _, err := runConfigCmd(t, "explain"); err == nil || !strings.Contains(err.Error(), "config") {
		t.Errorf("explain without --config: %v", err)
	}
	if _, err := runConfigCmd(t, "migrate", "--config", "/nonexistent.yaml"); err == nil {
		t.Error("migrate of a missing file: want an error")
	}
}

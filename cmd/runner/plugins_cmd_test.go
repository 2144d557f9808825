package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/internal/testplugins"
)

func runRunner(t *testing.T, args ...string) string {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("runner %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

func TestPluginsListJSON(t *testing.T) {
	dir := t.TempDir()
	if err := testplugins.Build(dir); err != nil {
		t.Fatal(err)
	}
	out := runRunner(t, "plugins", "list", "--plugin-dir", dir, "--json")
	var raw []map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not a JSON array: %v\n%s", err, out)
	}
	if len(raw) != len(testplugins.Names) {
		t.Fatalf("listed %d plugins, want %d:\n%s", len(raw), len(testplugins.Names), out)
	}
	want := []string{"error", "kinds", "name", "path", "protocol", "sha256", "version"}
	byName := map[string]map[string]any{}
	for _, o := range raw {
		var fields []string
		for k := range o {
			fields = append(fields, k)
		}
		sort.Strings(fields)
		if !reflect.DeepEqual(fields, want) {
			t.Errorf("fields %v, want exactly %v", fields, want)
		}
		byName[o["name"].(string)] = o
	}
	mem := byName["mem"]
	if mem["error"] != "" || mem["version"] != "0.1.0" || mem["protocol"] != 1.0 ||
		!reflect.DeepEqual(mem["kinds"], []any{"state-backend", "checkpoint-storage"}) ||
		mem["path"] != filepath.Join(dir, "flowstate-plugin-mem") || len(mem["sha256"].(string)) != 64 {
		t.Errorf("mem: %v", mem)
	}
	junk := byName["junk"]
	if !strings.Contains(junk["error"].(string), "not a Flowstate plugin") || !reflect.DeepEqual(junk["kinds"], []any{}) {
		t.Errorf("junk: %v", junk)
	}
	table := runRunner(t, "plugins", "list", "--plugin-dir", dir)
	if !strings.HasPrefix(table, "NAME") || !strings.Contains(table, "state-backend,checkpoint-storage") || !strings.Contains(table, "exit status 3") {
		t.Errorf("table:\n%s", table)
	}
}

func TestDefaultPluginDirIsBesideTheExecutable(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := defaultPluginDir()
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(filepath.Dir(exe), "plugins") {
		t.Errorf("default plugin dir %s, want plugins/ beside %s", dir, exe)
	}
	g := &globalFlags{pluginDir: "/elsewhere"}
	if d, _ := pluginDirFor(g); d != "/elsewhere" {
		t.Errorf("--plugin-dir ignored: %s", d)
	}
}

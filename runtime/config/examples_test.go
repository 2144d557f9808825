package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The seed's Old -> New table, one pair of example files per row.
var exampleRows = []struct {
	name, backend, storage string
	dir                    bool
}{
	{"memory", "hashmap", "jmstorage", false},
	{"fs", "hashmap", "fsstorage", true},
	{"rocksdb-memory", "leveldb", "jmstorage", false},
	{"rocksdb-fs", "leveldb", "fsstorage", true},
	{"memory-path", "hashmap", "jmstorage", true},
}

const examplesDir = "../../examples/configs"

func loadResolved(t *testing.T, path string) *Config {
	t.Helper()
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Resolve(c, nil); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExampleConfigs(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(examplesDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	input, err := filepath.Abs("../../examples/wordcount/input")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range exampleRows {
		oldPath := filepath.Join(examplesDir, row.name+"-old.yaml")
		newPath := filepath.Join(examplesDir, row.name+"-new.yaml")
		oldC, newC := loadResolved(t, oldPath), loadResolved(t, newPath)
		for _, c := range []*Config{oldC, newC} {
			wantEqual(t, c.File+" backend", c.StateBackend, row.backend)
			wantEqual(t, c.File+" storage", c.CheckpointStorage, row.storage)
			wantEqual(t, c.File+" has a dir", c.Checkpointing.Dir != "", row.dir)
			wantEqual(t, c.File+" job type", c.Job.Type, "wordcount")
			wantEqual(t, c.File+" job input", c.Job.Input, input)
			if c.Job.Output == "" || c.Checkpointing.Interval == 0 {
				t.Errorf("%s: want a job output and a checkpoint interval", c.File)
			}
		}
		wantEqual(t, row.name+": old and new resolve alike", viewOf(oldC), viewOf(newC))
		if len(oldC.Deprecations) == 0 {
			t.Errorf("%s: the old form should use deprecated keys", oldPath)
		}
		if len(newC.Deprecations) != 0 {
			t.Errorf("%s: the new form should have no deprecations, got %q", newPath, newC.Deprecations)
		}
		// Migrating the old form gives the new form's configuration.
		data, err := os.ReadFile(oldPath)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Migrate(data, oldPath)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Parse([]byte(out), oldPath)
		if err != nil {
			t.Fatalf("%s migrated:\n%s\n%v", oldPath, out, err)
		}
		if err := Resolve(m, nil); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, row.name+": migrated old form", viewOf(m), viewOf(newC))
		for _, f := range []string{row.name + "-old.yaml", row.name + "-new.yaml"} {
			if !strings.Contains(string(readme), f) {
				t.Errorf("README.md does not list %s", f)
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	wantEqual(t, "example files", len(files), 2*len(exampleRows))
}

package config

import (
	"strings"
	"testing"
	"time"
)

// TestLegacyKeys: each deprecated key loads like its replacement, with one deprecation
// message naming the replacement and the line.
func TestLegacyKeys(t *testing.T) {
	cases := []struct {
		old, current, value string
		check               func(c *Config) any
		want                any
	}{
		{"state.backend", "state.backend.type", "leveldb", func(c *Config) any { return c.StateBackend }, "leveldb"},
		{"state.checkpoint-storage", "execution.checkpointing.storage", "filesystem", func(c *Config) any { return c.CheckpointStorage }, "fsstorage"},
		{"state.checkpoints.dir", "execution.checkpointing.dir", "/ck", func(c *Config) any { return c.Checkpointing.Dir }, "/ck"},
		{"state.savepoints.dir", "execution.checkpointing.savepoint-dir", "/sp", func(c *Config) any { return c.Checkpointing.SavepointDir }, "/sp"},
		{"state.checkpoints.num-retained", "execution.checkpointing.num-retained", "4", func(c *Config) any { return c.Checkpointing.NumRetained }, 4},
		{"state.backend.incremental", "execution.checkpointing.incremental", "true", func(c *Config) any { return c.Checkpointing.Incremental }, true},
		{"state.storage.fs.memory-threshold", "execution.checkpointing.data-inline-threshold", "2kb", func(c *Config) any { return c.Checkpointing.DataInlineThreshold }, int64(2048)},
		{"restart-strategy", "restart-strategy.type", "none", func(c *Config) any { return c.Restart.Type }, "none"},
		{"state.backend.rocksdb.checkpointdir", "state.backend.rocksdb.localdir", "/ldb", func(c *Config) any { return c.backendOpts["leveldb"]["localdir"].value }, "/ldb"},
	}
	for _, tc := range cases {
		pre := "execution.checkpointing.dir: /ck\n" // so that filesystem storage resolves
		if tc.old == "state.checkpoints.dir" {
			pre = "job.name: x\n"
		}
		oldC := mustParse(t, pre+tc.old+": "+tc.value+"\n")
		newC := mustParse(t, pre+tc.current+": "+tc.value+"\n")
		wantEqual(t, tc.old, tc.check(oldC), tc.want)
		wantEqual(t, tc.old+" same as "+tc.current, viewOf(oldC), viewOf(newC))
		if len(oldC.Deprecations) != 1 {
			t.Errorf("%s: want one deprecation, got %q", tc.old, oldC.Deprecations)
			continue
		}
		wantContains(t, oldC.Deprecations[0], "config.yaml:2: "+tc.old, "is deprecated: use "+tc.current)
		if len(newC.Deprecations) != 0 {
			t.Errorf("%s: want no deprecation, got %q", tc.current, newC.Deprecations)
		}
		canonical, _ := classify(tc.current, nil)
		wantEqual(t, "line by current name", oldC.Line(canonical.canonical), 2)
		// Old and new together with the same value: one deprecation, no conflict.
		both := mustParse(t, pre+tc.old+": "+tc.value+"\n"+tc.current+": "+tc.value+"\n")
		wantEqual(t, tc.old+" with "+tc.current, viewOf(both), viewOf(newC))
		wantEqual(t, "deprecations", len(both.Deprecations), 1)
		wantEqual(t, "current key wins for lines", both.Line(canonical.canonical), 3)
	}
}

// TestLegacyBackendValues: the seed's Old -> New table.
func TestLegacyBackendValues(t *testing.T) {
	cases := []struct {
		in               string
		backend, storage string
		dir              string
		deprecation      string
	}{
		{"state.backend: jobmanager\n", "hashmap", "jmstorage", "", "state.backend: jobmanager is deprecated: use state.backend.type: hashmap and execution.checkpointing.storage: jmstorage (MemoryStateBackend"},
		{"state.backend: memory\n", "hashmap", "jmstorage", "", "MemoryStateBackend = HashMapStateBackend + JobManagerCheckpointStorage"},
		{"state.backend: filesystem\nexecution.checkpointing.dir: /ck\n", "hashmap", "fsstorage", "/ck", "use state.backend.type: hashmap and execution.checkpointing.storage: fsstorage (FsStateBackend"},
		{"state.backend: fs\nstate.checkpoints.dir: /ck\n", "hashmap", "fsstorage", "/ck", "FsStateBackend = HashMapStateBackend + FileSystemCheckpointStorage"},
		{"state.backend: rocksdb\n", "leveldb", "jmstorage", "", "use state.backend.type: leveldb and execution.checkpointing.storage: jmstorage (RocksDBStateBackend"},
		{"state.backend: rocksdb\nstate.checkpoints.dir: /ck\n", "leveldb", "fsstorage", "/ck", "use state.backend.type: leveldb and execution.checkpointing.storage: fsstorage"},
		// MemoryStateBackend("file://path"): the jobmanager storage keeps its path.
		{"state.backend: jobmanager\nstate.checkpoints.dir: file:///ck\n", "hashmap", "jmstorage", "file:///ck", "MemoryStateBackend"},
		{"state.backend: JobManager\n", "hashmap", "jmstorage", "", "state.backend: JobManager is deprecated"},
	}
	for _, tc := range cases {
		c := mustParse(t, tc.in)
		wantEqual(t, tc.in+" backend after Parse", c.StateBackend, tc.backend)
		wantEqual(t, tc.in+" storage after Parse", c.CheckpointStorage, tc.storage)
		if err := Resolve(c, nil); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		wantEqual(t, tc.in+" storage", c.CheckpointStorage, tc.storage)
		wantEqual(t, tc.in+" dir", c.Checkpointing.Dir, tc.dir)
		if tc.dir != "" {
			wantEqual(t, tc.in+" storage gets the dir", c.StorageOptions["dir"], tc.dir)
		}
		wantContains(t, strings.Join(c.Deprecations, "\n"), tc.deprecation)
		wantContains(t, c.CheckpointStorageSource(), "the deprecated state.backend")
	}
}

// A configured storage wins over the one a deprecated backend value implies, with a warning.
func TestLegacyBackendWithConfiguredStorage(t *testing.T) {
	c := mustResolve(t, "state.backend: filesystem\nexecution.checkpointing.storage: jobmanager\nexecution.checkpointing.dir: /ck\n")
	wantEqual(t, "storage", c.CheckpointStorage, "jmstorage")
	wantContains(t, strings.Join(c.Warnings, "\n"), "config.yaml:1: state.backend: filesystem implies fsstorage checkpoint storage, but execution.checkpointing.storage (line 2) selects jmstorage; using jmstorage")
	// rocksdb never fixed the storage: no warning.
	c = mustResolve(t, "state.backend: rocksdb\nstate.checkpoint-storage: jobmanager\nstate.checkpoints.dir: /ck\n")
	wantEqual(t, "rocksdb storage", c.CheckpointStorage, "jmstorage")
	wantEqual(t, "warnings", len(c.Warnings), 0)
	wantEqual(t, "deprecations", len(c.Deprecations), 3)
	// state.backend: filesystem without a checkpoint dir cannot work.
	c = mustParse(t, "job.name: x\nstate.backend: filesystem\n")
	err := Resolve(c, nil)
	if err == nil {
		t.Fatal("want an error for filesystem storage without a dir")
	}
	wantContains(t, err.Error(), "config.yaml:2: state.backend: filesystem: bad value: filesystem checkpoint storage (fsstorage) needs a checkpoint directory: set execution.checkpointing.dir")
	// Old and new backend keys that agree on the plugin are not a conflict; the old value
	// still implies its storage.
	c = mustResolve(t, "state.backend: jobmanager\nstate.backend.type: hashmap\nexecution.checkpointing.interval: 1s\n")
	wantEqual(t, "storage", c.CheckpointStorage, "jmstorage")
	wantEqual(t, "interval", c.Checkpointing.Interval, time.Second)
}

package config

import (
	"strings"
	"testing"
)

// migrated runs Migrate and checks that the result parses to the same configuration with no
// deprecations left.
func migrated(t *testing.T, in string) string {
	t.Helper()
	out, err := Migrate([]byte(in), testFile)
	if err != nil {
		t.Fatalf("Migrate:\n%s\nerror: %v", in, err)
	}
	before := mustResolve(t, in)
	after, err := Parse([]byte(out), testFile)
	if err != nil {
		t.Fatalf("migrated output does not parse:\n%s\nerror: %v", out, err)
	}
	if err := Resolve(after, nil); err != nil {
		t.Fatalf("migrated output does not resolve:\n%s\nerror: %v", out, err)
	}
	wantEqual(t, "migrated config\n"+out, viewOf(after), viewOf(before))
	if len(after.Deprecations) != 0 {
		t.Errorf("migrated output still has deprecations %q:\n%s", after.Deprecations, out)
	}
	return out
}

func TestMigrate(t *testing.T) {
	cases := []struct {
		name, in string
		lines    []string // lines the output must have
		absent   []string
	}{
		{"flat fs", `# our settings
state.backend: filesystem # was set by ops
state.checkpoints.dir: /var/ck
state.savepoints.dir: sp
state.checkpoints.num-retained: 3
state.storage.fs.memory-threshold: 1kb
execution.checkpointing.interval: 10s
`, []string{
			"# our settings",
			"state.backend.type: hashmap # was state.backend: filesystem (FsStateBackend = HashMapStateBackend + FileSystemCheckpointStorage); was set by ops",
			"execution.checkpointing.storage: fsstorage # implied by the old state.backend: filesystem",
			"execution.checkpointing.dir: /var/ck # was state.checkpoints.dir (deprecated)",
			"execution.checkpointing.savepoint-dir: sp # was state.savepoints.dir (deprecated)",
			"execution.checkpointing.num-retained: 3 # was state.checkpoints.num-retained (deprecated)",
			"execution.checkpointing.data-inline-threshold: 1kb # was state.storage.fs.memory-threshold (deprecated)",
			"execution.checkpointing.interval: 10s",
		}, []string{"\nstate.backend:", "\nstate.checkpoints"}},
		{"nested rocksdb", `state:
  backend: rocksdb
  checkpoints:
    dir: /var/ck
job:
  name: wc
`, []string{
			"state.backend.type: leveldb # was state.backend: rocksdb (RocksDBStateBackend",
			"execution.checkpointing.storage: fsstorage # implied by the old state.backend: rocksdb",
			"execution.checkpointing.dir: /var/ck # was state.checkpoints.dir (deprecated)",
			"job:", "  name: wc",
		}, []string{"state:\n"}},
		{"rocksdb without a dir keeps jobmanager storage", "state.backend: rocksdb\nstate.backend.rocksdb.checkpointdir: /ldb\n", []string{
			"state.backend.type: leveldb # was state.backend: rocksdb",
			"execution.checkpointing.storage: jmstorage # implied by the old state.backend: rocksdb",
			"state.backend.leveldb.localdir: /ldb # was state.backend.rocksdb.checkpointdir (deprecated: rocksdb is leveldb here)",
		}, nil},
		{"rocksdb options follow the backend to leveldb", "state.backend: rocksdb\nstate.backend.rocksdb.localdir: /ldb\nstate.backend.rocksdb.block.cache-size: 16mb\nstate.checkpoints.dir: /ck\n", []string{
			"state.backend.type: leveldb # was state.backend: rocksdb",
			"state.backend.leveldb.localdir: /ldb # was state.backend.rocksdb.localdir (Flink's name of the option: rocksdb is leveldb here)",
			"state.backend.leveldb.block-cache-size: 16mb # was state.backend.rocksdb.block.cache-size (Flink's name of the option: rocksdb is leveldb here)",
		}, []string{"\nstate.backend.rocksdb."}},
		{"nested rocksdb options of a leveldb file", "state:\n  backend:\n    type: leveldb\n    rocksdb:\n      localdir: /ldb\n", []string{
			"state.backend.leveldb.localdir: /ldb # was state.backend.rocksdb.localdir (Flink's name of the option: rocksdb is leveldb here)",
			"state:\n  backend:\n    type: leveldb\n",
		}, []string{"rocksdb:"}},
		{"memory with a path keeps it", "state.backend: jobmanager\nstate.checkpoints.dir: file:///var/ck\n", []string{
			"execution.checkpointing.storage: jmstorage # implied by the old state.backend: jobmanager",
			"execution.checkpointing.dir: file:///var/ck # was state.checkpoints.dir (deprecated)",
		}, nil},
		{"old and new together", "state.backend: jobmanager\nstate.backend.type: hashmap\nstate.checkpoints.dir: /a\nexecution.checkpointing.dir: /a\n", []string{
			"state.backend.type: hashmap # state.backend: jobmanager also set it (removed)",
			"execution.checkpointing.storage: jmstorage # implied by the old state.backend: jobmanager",
			"execution.checkpointing.dir: /a # state.checkpoints.dir: /a also set it (removed)",
		}, []string{"\nstate.backend:", "\nstate.checkpoints.dir"}},
		{"configured storage stays", "state.backend: filesystem\nstate.checkpoint-storage: jobmanager\nstate.backend.incremental: false\n", []string{
			"state.backend.type: hashmap # was state.backend: filesystem",
			"execution.checkpointing.storage: jobmanager # was state.checkpoint-storage (deprecated)",
			"execution.checkpointing.incremental: false # was state.backend.incremental (deprecated)",
		}, []string{"implied by"}},
	}
	for _, tc := range cases {
		out := migrated(t, tc.in)
		for _, l := range tc.lines {
			if !strings.Contains("\n"+out, "\n"+l) {
				t.Errorf("%s: want line %q in:\n%s", tc.name, l, out)
			}
		}
		for _, a := range tc.absent {
			if strings.Contains(out, a) {
				t.Errorf("%s: want no %q in:\n%s", tc.name, a, out)
			}
		}
		if !strings.HasPrefix(out, "# Migrated to current keys by runner config migrate") {
			t.Errorf("%s: want a header comment:\n%s", tc.name, out)
		}
	}
}

func TestMigrateUnchanged(t *testing.T) {
	in := "# current\nstate.backend.type: leveldb\nexecution:\n  checkpointing:\n    dir: /ck # here\n"
	out := migrated(t, in)
	wantEqual(t, "unchanged file", out, in)
	// Flink's current names of the backend and its options stay together.
	in = "state.backend.type: rocksdb\nstate.backend.rocksdb.localdir: /ldb\n"
	wantEqual(t, "Flink's rocksdb file", migrated(t, in), in)
	if _, err := Migrate([]byte("bogus.key: 1\n"), testFile); err == nil {
		t.Error("Migrate of a bad file: want Parse's error")
	}
	if out, err := Migrate(nil, testFile); err != nil || out != "" {
		t.Errorf("Migrate of an empty file: %q, %v", out, err)
	}
}

package flinkkeys

import (
	"os"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/builtins"
)

// TestCatalogIsConsistent: no key or deprecated spelling is in the catalog twice, every
// refused key names its feature, every inert key depends on a feature of the catalog, and
// every ignored key gives a reason.
func TestCatalogIsConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range table {
		for _, k := range append([]string{e.Name}, e.Deprecated...) {
			if seen[k] {
				t.Errorf("%s is in the catalog twice", k)
			}
			seen[k] = true
		}
		switch e.Status {
		case Refused:
			if e.What == "" {
				t.Errorf("refused %s does not name its feature", e.Name)
			}
		case Inert:
			if _, ok := exact[e.Target]; !ok && e.Target != stateBackendType {
				t.Errorf("inert %s depends on %s, which is not in the catalog", e.Name, e.Target)
			}
		case Ignored:
			if e.What == "" {
				t.Errorf("ignored %s gives no reason", e.Name)
			}
		}
	}
}

// TestLookup: Lookup finds exact keys (before the namespace they are in), Flink's
// deprecated spellings and keys in a namespace, and not the keys Flowstate reads itself;
// what it and All return are copies.
func TestLookup(t *testing.T) {
	for _, tc := range []struct {
		key, want  string
		deprecated bool
	}{
		{"execution.checkpointing.unaligned.enabled", "execution.checkpointing.unaligned.enabled", false},
		{"execution.checkpointing.unaligned", "execution.checkpointing.unaligned.enabled", true},
		{"s3.access.key", "s3.access-key", true},
		{"state.backend.rocksdb.metrics.block-cache-usage", "state.backend.rocksdb.metrics.", false},
		{"s3.endpoint", "s3.endpoint", false},
		{"s3.upload.max.concurrent.uploads", "s3.", false},
		{"execution.batch-shuffle-mode", "execution.batch-", false},
	} {
		e, deprecated, ok := Lookup(tc.key)
		if !ok || e.Name != tc.want || deprecated != tc.deprecated {
			t.Errorf("Lookup(%q) = %q, deprecated %v, %v; want %q, deprecated %v", tc.key, e.Name, deprecated, ok, tc.want, tc.deprecated)
		}
	}
	for _, key := range []string{"execution.checkpointing.interval", "state.checkpoints.dir", "job.name", "no.such.key"} {
		if e, _, ok := Lookup(key); ok {
			t.Errorf("Lookup(%q) found %q; Flowstate reads it itself or Flink has no such key", key, e.Name)
		}
	}
	e, _, _ := Lookup("execution.checkpointing.unaligned")
	e.Deprecated[0] = "changed"
	if again, _, _ := Lookup("execution.checkpointing.unaligned"); again.Deprecated[0] == "changed" {
		t.Error("changing what Lookup returned changed the catalog")
	}
	all := All()
	all[0].Name, all[0].Deprecated[0] = "changed", "changed"
	if table[0].Name == "changed" || table[0].Deprecated[0] == "changed" {
		t.Error("changing what All returned changed the catalog")
	}
}

// TestAliasesFeaturesAndBackends: the other lookups over the catalog.
func TestAliasesFeaturesAndBackends(t *testing.T) {
	if name, ok := AliasOf("state.backend." + builtins.LevelDB + "." + builtins.LevelDBLocalDir); !ok || name != "state.backend.rocksdb.localdir" {
		t.Errorf("AliasOf(leveldb's localdir) = %q, %v", name, ok)
	}
	if name, ok := AliasOf("no.such.key"); ok {
		t.Errorf("AliasOf(no.such.key) = %q", name)
	}
	for key, want := range map[string]string{
		"execution.checkpointing.unaligned.enabled": "unaligned checkpoints (execution.checkpointing.unaligned.enabled)",
		stateBackendType: "state.backend.type: forst",
		"no.such.key":    "no.such.key",
	} {
		if got := FeatureOf(key); got != want {
			t.Errorf("FeatureOf(%q) = %q, want %q", key, got, want)
		}
	}
	if why, ok := RefusedBackend(ForSt); !ok || !strings.Contains(why, "ForSt") {
		t.Errorf("RefusedBackend(forst) = %q, %v", why, ok)
	}
	if _, ok := RefusedBackend("rocksdb"); ok {
		t.Error("rocksdb is refused")
	}
	if b, ok := BackendAlias("rocksdb"); !ok || b != builtins.LevelDB {
		t.Errorf("BackendAlias(rocksdb) = %q, %v", b, ok)
	}
	if b, ok := BackendAlias("org.apache.flink.runtime.state.hashmap.hashmapstatebackendfactory"); !ok || b != builtins.Hashmap {
		t.Errorf("BackendAlias(hashmap's factory) = %q, %v", b, ok)
	}
	if b, ok := BackendAlias(builtins.LevelDB); ok {
		t.Errorf("BackendAlias(leveldb) = %q: not another name", b)
	}
}

// TestDocsListEveryFlinkKey: docs/configuration.md has a row for every checkpointing, state,
// recovery, restart, RocksDB, changelog and job key of the catalog, with its status.
func TestDocsListEveryFlinkKey(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| `") {
			key, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			rows[strings.TrimSuffix(key, "*")] = line
		}
	}
	status := map[Status]string{Supported: "| supported", Alias: "| alias of", Refused: "| refused", Inert: "| ignored", Ignored: "| ignored"}
	for _, e := range table {
		if e.group == groupCluster {
			continue
		}
		row, ok := rows[e.Name]
		if !ok {
			t.Errorf("docs/configuration.md has no row for %s", e.Name)
			continue
		}
		if !strings.Contains(row, status[e.Status]) {
			t.Errorf("the row of %s does not say %q: %s", e.Name, status[e.Status], row)
		}
		for _, d := range e.Deprecated {
			if !strings.Contains(row, "`"+d+"`") {
				t.Errorf("the row of %s does not name Flink's deprecated %s", e.Name, d)
			}
		}
	}
}

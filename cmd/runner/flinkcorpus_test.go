package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// corpusDir holds realistic Flink configuration files: the default config.yaml of a Flink
// 2.x distribution, production files of Flink 1.x (flat flink-conf.yaml) and 2.x (nested),
// and files that turn on features Flowstate does not implement.
const corpusDir = "../../runtime/config/testdata/flink"

// corpusCase is what explain must say about one file of the corpus.
type corpusCase struct {
	valid bool
	// refused are the keys the file turns on a feature with, which must be errors of kind
	// "not supported" at their lines.
	refused []string
	// want are fields of the JSON explanation of a valid file.
	want map[string]any
}

var corpus = map[string]corpusCase{
	"flink2-default-config.yaml": {valid: true, want: map[string]any{"state_backend": "hashmap", "checkpoint_storage": "jmstorage",
		"interval": "off", "parallelism": 1.0, "restart_strategy": "none", "checkpointing_mode": "EXACTLY_ONCE"}},
	"flink2-production-config.yaml": {valid: true, want: map[string]any{"state_backend": "leveldb", "checkpoint_storage": "fsstorage",
		"checkpoint_dir": "s3://flink-prod/checkpoints", "interval_ms": 60000.0, "min_pause_ms": 30000.0, "max_concurrent_checkpoints": 1.0,
		"externalized_checkpoint_retention": "RETAIN_ON_CANCELLATION", "claim_mode": "NO_CLAIM", "restart_strategy": "exponential-delay",
		"parallelism": 4.0, "max_parallelism": 256.0, "job_name": "clicks", "num_retained": 3.0, "tolerable_failed_checkpoints": 3.0,
		"incremental": true, "working_state_dir": "/mnt/local-ssd/rocksdb"}},
	"flink1-production-flink-conf.yaml": {valid: true, want: map[string]any{"state_backend": "leveldb", "checkpoint_storage": "fsstorage",
		"checkpoint_dir": "s3://flink-state/checkpoints", "savepoint_dir": "s3://flink-state/savepoints", "interval_ms": 30000.0,
		"min_pause_ms": 10000.0, "externalized_checkpoint_retention": "DELETE_ON_CANCELLATION", "restart_strategy": "fixed-delay",
		"parallelism": 2.0, "num_retained": 2.0, "tolerable_failed_checkpoints": 5.0, "working_state_dir": "/data/flink/rocksdb"}},
	"flink1-legacy-lines.yaml": {valid: true, want: map[string]any{"state_backend": "hashmap", "interval_ms": 10000.0,
		"restart_strategy": "exponential-delay"}},
	"flink2-unsupported-features.yaml": {refused: []string{"execution.checkpointing.unaligned.enabled", "execution.checkpointing.file-merging.enabled",
		"execution.checkpointing.local-backup.enabled", "state.backend.changelog.enabled", "state.backend.rocksdb.thread.num"}},
	"flink1-unsupported-local-recovery.yaml": {refused: []string{"state.backend.local-recovery", "state.backend.rocksdb.memory.fixed-per-slot"}},
}

// clusterOnly says, on its own, whether a Flink key only concerns a Flink cluster: its
// JobManager and TaskManagers, high availability, REST server and web UI, metrics,
// security, JVM environment and deployment, or a setting of Flink's own DataStream program
// or S3 client that Flowstate has no use for.
func clusterOnly(key string) bool {
	if key == "high-availability" || key == "io.tmp.dirs" {
		return true
	}
	switch key {
	case "rest.address", "rest.port", "pipeline.name", "pipeline.max-parallelism",
		"heartbeat.interval", "heartbeat.timeout": // the runner's heartbeats of its plugins
		return false
	}
	for _, p := range []string{"jobmanager.", "taskmanager.", "high-availability.", "rest.", "web.", "metrics.", "security.",
		"env.", "kubernetes.", "blob.", "akka.", "heartbeat.", "classloader.", "queryable-state.", "pipeline.", "s3.entropy."} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// flatKeys reads a corpus file's keys and lines on its own: YAML walked to its leaves, or,
// for a file that is not YAML, Flink 1.x's "key: value" lines.
func flatKeys(t *testing.T, data []byte) map[string]int {
	t.Helper()
	out := map[string]int{}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		for i, line := range strings.Split(string(data), "\n") {
			line, _, _ = strings.Cut(line, "#")
			if k, _, ok := strings.Cut(line, ": "); ok {
				out[strings.TrimSpace(k)] = i + 1
			}
		}
		return out
	}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			key := k.Value
			if prefix != "" {
				key = prefix + "." + key
			}
			if v.Kind == yaml.MappingNode {
				walk(v, key)
				continue
			}
			out[key] = k.Line
		}
	}
	walk(doc.Content[0], "")
	return out
}

type explained struct {
	Valid  bool `json:"valid"`
	Errors []struct {
		Line    int    `json:"line"`
		Key     string `json:"key"`
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"errors"`
	Ignored []struct {
		Key    string `json:"key"`
		Line   int    `json:"line"`
		Reason string `json:"reason"`
	} `json:"ignored"`
}

// TestFlinkCorpusThroughExplain runs every file of the corpus through config explain
// --json: the output is always JSON; cluster keys load and are listed as ignored with their
// lines; features Flowstate lacks are refused by name, line and kind, and the command then
// fails; valid files resolve as Flink would read them.
func TestFlinkCorpusThroughExplain(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.yaml"))
	if err != nil || len(files) != len(corpus) {
		t.Fatalf("corpus files %v (%v), want the %d described", files, err, len(corpus))
	}
	for _, file := range files {
		name := filepath.Base(file)
		want := corpus[name]
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			out, runErr := runConfigCmd(t, "explain", "--config", file, "--json", "--plugin-dir", t.TempDir())
			var got explained
			var fields map[string]any
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("explain --json printed no JSON (%v):\n%s", err, out)
			}
			json.Unmarshal([]byte(out), &fields)
			if got.Valid != want.valid || (runErr == nil) != want.valid {
				t.Fatalf("valid %v, command error %v; want valid %v:\n%s", got.Valid, runErr, want.valid, out)
			}
			keys := flatKeys(t, data)
			if want.valid {
				ignored := map[string]int{}
				for _, ig := range got.Ignored {
					ignored[ig.Key] = ig.Line
					if ig.Reason == "" {
						t.Errorf("%s is ignored without a reason", ig.Key)
					}
				}
				var missing, extra []string
				for k, line := range keys {
					if clusterOnly(k) && ignored[k] != line {
						missing = append(missing, k)
					}
				}
				for k := range ignored {
					if !clusterOnly(k) {
						extra = append(extra, k)
					}
				}
				sort.Strings(missing)
				sort.Strings(extra)
				if len(missing)+len(extra) > 0 {
					t.Fatalf("cluster keys not listed as ignored at their lines: %v; other keys listed as ignored: %v", missing, extra)
				}
				for k, v := range want.want {
					if fields[k] != v {
						t.Errorf("%s: got %#v, want %#v", k, fields[k], v)
					}
				}
				return
			}
			refused := map[string]bool{}
			for _, e := range got.Errors {
				if e.Kind != "not supported" || e.Line != keys[e.Key] || !strings.Contains(e.Message, e.Key) {
					t.Errorf("error %+v: want kind \"not supported\" at line %d naming the key", e, keys[e.Key])
				}
				refused[e.Key] = true
			}
			for _, k := range want.refused {
				if !refused[k] {
					t.Errorf("%s was not refused: %s", k, out)
				}
			}
			if len(refused) != len(want.refused) {
				t.Errorf("refused %v, want exactly %v", refused, want.refused)
			}
		})
	}
}

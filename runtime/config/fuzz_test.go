package config

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the configuration parser: it must never panic, its
// errors must name the file, and a configuration it accepts must migrate to current keys
// that parse to the same settings.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"state.backend.type: hashmap\nexecution.checkpointing.dir: /tmp/ck\n",
		"state:\n  backend: rocksdb\n  checkpoints.dir: file:///tmp/x\n",
		"execution: {checkpointing.interval: 10s, checkpointing.num-retained: 3}\n",
		"job:\n  name: wc\n  parallelism: 2\n  input: in\n  output: out\n",
		"a: &x [*x]\n",
		"state.backend.type: [1, 2]\n",
		"execution.checkpointing.timeout: 10 parsecs\n",
		"jobmanager.rpc.address: @host\nstate.backend: rocksdb # flat Flink 1.x lines\nmetrics.scope.operator: *.op\n",
		"parallelism.default: 2\nexecution.checkpointing.unaligned: false\nrestart-strategy.fixed-delay.attempts: 2\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "/fuzz/flowstate.yaml"
		c, err := Parse(data, file)
		if err != nil {
			if !strings.Contains(err.Error(), "flowstate.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		migrated, err := Migrate(data, file)
		if err != nil {
			t.Fatalf("Parse accepted the file but Migrate refused it: %v", err)
		}
		c2, err := Parse([]byte(migrated), file)
		if err != nil {
			t.Fatalf("the migrated file does not parse: %v\n%s", err, migrated)
		}
		if c.StateBackend != c2.StateBackend || c.CheckpointStorage != c2.CheckpointStorage ||
			c.Checkpointing.Dir != c2.Checkpointing.Dir || c.Checkpointing.Interval != c2.Checkpointing.Interval ||
			c.Job.Name != c2.Job.Name {
			t.Fatalf("migration changed the settings:\nbefore %+v\nafter  %+v\n%s", c, c2, migrated)
		}
	})
}

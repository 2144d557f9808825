package config

import (
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

func TestDefaults(t *testing.T) {
	for _, in := range []string{"", "# only a comment\n", "---\n"} {
		c := mustParse(t, in)
		wantEqual(t, "backend", c.StateBackend, "hashmap")
		wantEqual(t, "storage after Parse", c.CheckpointStorage, "")
		wantEqual(t, "checkpointing", c.Checkpointing, Checkpointing{Timeout: 10 * time.Minute, NumRetained: 1, DataInlineThreshold: 20 << 10,
			Mode: "EXACTLY_ONCE", MaxConcurrent: 1, Retention: "NO_EXTERNALIZED_CHECKPOINTS"})
		wantEqual(t, "recovery", c.Recovery, Recovery{ClaimMode: "NO_CLAIM"})
		wantEqual(t, "job", c.Job, Job{Type: "wordcount", Parallelism: 1, MaxParallelism: 128, BatchSize: 1024, LeaseTimeout: 30 * time.Second, Source: "file", Sink: "file"})
		// Flink's defaults of every strategy (RestartStrategyOptions); the strategy itself
		// waits for the final checkpoint interval.
		wantEqual(t, "restart", c.Restart, Restart{Attempts: 1, Delay: time.Second,
			FailureRate: FailureRate{MaxFailures: 1, Interval: time.Minute, Delay: time.Second},
			ExponentialDelay: ExponentialDelay{InitialBackoff: time.Second, MaxBackoff: time.Minute, Multiplier: 1.5,
				ResetThreshold: time.Hour, JitterFactor: 0.1, AttemptsBeforeReset: 2147483647},
			CancellationTimeout: 30 * time.Second})
		wantEqual(t, "control", c.Control.Address, "127.0.0.1:0")
		wantEqual(t, "memory", c.Memory, Memory{Limit: 256 << 20, GOGC: GOGCOff})
		wantEqual(t, "plugins dir", c.Plugins.Dir, "")
		wantEqual(t, "backend options", c.BackendOptions, sdk.Options{})
		if c.Deprecations == nil || c.Warnings == nil || len(c.Deprecations)+len(c.Warnings) != 0 {
			t.Errorf("want empty, non-nil messages, got %q %q", c.Deprecations, c.Warnings)
		}
		if err := Resolve(c, nil); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "no checkpointing: no restarts (Flink's default)", c.Restart.Type, "none")
		c.Checkpointing.Interval = time.Second // as code may set it before Resolve
		if err := Resolve(c, nil); err != nil {
			t.Fatal(err)
		}
		wantEqual(t, "checkpointing: exponential-delay (Flink's default since 1.19)", c.Restart.Type, "exponential-delay")
		wantEqual(t, "default storage", c.CheckpointStorage, "jmstorage")
		wantEqual(t, "storage source", c.CheckpointStorageSource(), "default")
	}
}

func TestAllKeys(t *testing.T) {
	c := mustParse(t, `
state.backend.type: leveldb
state.backend.leveldb.localdir: work/ldb
state.backend.leveldb.block-cache-size: 64mb
execution.checkpointing.storage: filesystem
execution.checkpointing.dir: ckpt
execution.checkpointing.savepoint-dir: s3://bucket/savepoints
execution.checkpointing.interval: 10s
execution.checkpointing.timeout: 1min
execution.checkpointing.num-retained: 3
execution.checkpointing.tolerable-failed-checkpoints: 2
execution.checkpointing.incremental: true
execution.checkpointing.data-inline-threshold: 4kb
execution.checkpointing.shared-filesystem: TRUE
execution.checkpointing.filesystem.write-buffer-size: 8kb
plugins.dir: ../plugins
plugins.checksums.leveldb: sha256:abc
job.name: wc
job.type: wordcount
job.parallelism: 4
job.max-parallelism: 256
job.input: in.txt
job.output: file:///tmp/out
job.rate: 1500.5
job.keys: 1000
job.records: 50000
job.batch-size: 256
job.lease.timeout: 5s
restart-strategy.type: fixed-delay
restart-strategy.fixed-delay.attempts: 5
restart-strategy.fixed-delay.delay: 500 ms
execution.recovery.start-over-on-checkpoint-loss: true
task.cancellation.timeout: 5s
rest.address: 0.0.0.0
rest.port: 9091
runner.memory.limit: 1gb
runner.memory.gogc: 200
`)
	wantEqual(t, "memory", c.Memory, Memory{Limit: 1 << 30, GOGC: 200})
	wantEqual(t, "view", viewOf(c), view{
		StateBackend:      "leveldb",
		CheckpointStorage: "fsstorage",
		BackendOptions:    sdk.Options{"localdir": "/etc/flowstate/work/ldb", "block-cache-size": "64mb", "incremental": "true"},
		StorageOptions: sdk.Options{"dir": "/etc/flowstate/ckpt", "savepoint-dir": "s3://bucket/savepoints",
			"data-inline-threshold": "4096", "write-buffer-size": "8kb"},
		Checkpointing: Checkpointing{Interval: 10 * time.Second, Timeout: time.Minute, NumRetained: 3, TolerableFailed: 2,
			Incremental: true, Dir: "/etc/flowstate/ckpt", SavepointDir: "s3://bucket/savepoints", DataInlineThreshold: 4096, SharedFilesystem: true,
			Mode: "EXACTLY_ONCE", MaxConcurrent: 1, Retention: "NO_EXTERNALIZED_CHECKPOINTS"},
		Plugins: Plugins{Dir: "/etc/plugins", Checksums: map[string]string{"leveldb": "sha256:abc"}},
		Job: Job{Name: "wc", Type: "wordcount", Parallelism: 4, MaxParallelism: 256, Input: "/etc/flowstate/in.txt",
			Output: "file:///tmp/out", Rate: 1500.5, Keys: 1000, Records: 50000, BatchSize: 256, LeaseTimeout: 5 * time.Second, Source: "file", Sink: "file"},
		Restart: func() Restart {
			r := defaultRestartSettings()
			r.Type, r.Attempts, r.Delay, r.StartOverOnCheckpointLoss, r.CancellationTimeout = "fixed-delay", 5, 500*time.Millisecond, true, 5*time.Second
			return r
		}(),
		Control: Control{Address: "0.0.0.0:9091"},
	})
	if len(c.Deprecations) != 0 || len(c.Warnings) != 0 {
		t.Errorf("current keys: want no messages, got %q %q", c.Deprecations, c.Warnings)
	}
	wantEqual(t, "line of a key", c.Line("execution.checkpointing.interval"), 8)
	wantEqual(t, "line of a plugin option", c.Line("state.backend.leveldb.block-cache-size"), 4)
	wantEqual(t, "line of a key not in the file", c.Line("job.nothing"), 0)
	wantEqual(t, "option key", c.OptionKey("leveldb", "block-cache-size"), "state.backend.leveldb.block-cache-size")
	wantEqual(t, "option key as written", c.OptionKey("fsstorage", "write-buffer-size"), "execution.checkpointing.filesystem.write-buffer-size")
	wantEqual(t, "common option key", c.OptionKey("fsstorage", "dir"), "execution.checkpointing.dir")
	wantEqual(t, "incremental key", c.OptionKey("leveldb", "incremental"), "execution.checkpointing.incremental")
	wantEqual(t, "option not in the file", c.OptionKey("leveldb", "write-buffer-size"), "state.backend.leveldb.write-buffer-size")
}

func TestShapes(t *testing.T) {
	flat := `
state.backend.type: leveldb
state.backend.leveldb.localdir: /var/ldb
execution.checkpointing.dir: /var/ck
execution.checkpointing.interval: 5s
job.parallelism: 2
`
	nested := `
state:
  backend:
    type: leveldb
    leveldb:
      localdir: /var/ldb
execution:
  checkpointing:
    dir: /var/ck
    interval: 5s
job:
  parallelism: 2
`
	mixed := `
state.backend:
  type: leveldb
  leveldb.localdir: /var/ldb
execution.checkpointing: {dir: /var/ck, interval: 5s}
job: {parallelism: 2}
`
	want := viewOf(mustResolve(t, flat))
	wantEqual(t, "nested", viewOf(mustResolve(t, nested)), want)
	wantEqual(t, "mixed", viewOf(mustResolve(t, mixed)), want)
	wantEqual(t, "nested line", mustParse(t, nested).Line("state.backend.leveldb.localdir"), 6)
	wantEqual(t, "storage", want.CheckpointStorage, "fsstorage")
}

func TestDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"10s": 10 * time.Second, "1min": time.Minute, "500ms": 500 * time.Millisecond, "2 h": 2 * time.Hour,
		"1500": 1500 * time.Millisecond, "3 minutes": 3 * time.Minute, "1d": 24 * time.Hour, "1m30s": 90 * time.Second,
		"0": 0, "1.5s": 1500 * time.Millisecond, "7 SECONDS": 7 * time.Second, "250us": 250 * time.Microsecond,
	} {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "s", "-5s", "10 parsecs", "ten seconds", "99999999999999999999s"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q): want an error", in)
		}
	}
}

func TestPaths(t *testing.T) {
	c := mustParse(t, `
execution.checkpointing.dir: file:///data/ck
execution.checkpointing.savepoint-dir: ./sp/../savepoints
job.input: /abs/in.txt
job.output: s3://bucket/out
plugins.dir: plugins
`)
	wantEqual(t, "file URI stays", c.Checkpointing.Dir, "file:///data/ck")
	wantEqual(t, "relative against the file's dir", c.Checkpointing.SavepointDir, "/etc/flowstate/savepoints")
	wantEqual(t, "absolute", c.Job.Input, "/abs/in.txt")
	wantEqual(t, "s3 stays", c.Job.Output, "s3://bucket/out")
	wantEqual(t, "plugins dir", c.Plugins.Dir, "/etc/flowstate/plugins")
	msg := parseErr(t, "execution.checkpointing.dir: file://relative/x\n")
	wantContains(t, msg, "config.yaml:1: execution.checkpointing.dir: bad value", "absolute path")
}

func TestStorageNames(t *testing.T) {
	for in, want := range map[string]string{"jobmanager": "jmstorage", "jmstorage": "jmstorage", "filesystem": "fsstorage",
		"fsstorage": "fsstorage", "FileSystem": "fsstorage", "my-s3": "my-s3"} {
		c := mustParse(t, "execution.checkpointing.dir: /ck\nexecution.checkpointing.storage: "+in+"\n")
		wantEqual(t, in, c.CheckpointStorage, want)
	}
	// Both spellings of a storage plugin's options reach it; equal values are not a conflict.
	c := mustResolve(t, `
execution.checkpointing.storage: jobmanager
execution.checkpointing.jobmanager.max-state-size: 1mb
execution.checkpointing.jmstorage.max-state-size: 1mb
execution.checkpointing.jmstorage.other: x
`)
	wantEqual(t, "jm options", c.StorageOptions, sdk.Options{"max-state-size": "1mb", "other": "x"})
	msg := parseErr(t, "execution.checkpointing.jobmanager.max-state-size: 1mb\nexecution.checkpointing.jmstorage.max-state-size: 2mb\n")
	wantContains(t, msg, "config.yaml:2", "conflicting keys", "execution.checkpointing.jobmanager.max-state-size: 1mb (line 1)",
		"execution.checkpointing.jmstorage.max-state-size: 2mb (line 2)")
}

func TestPluginOptionsIgnoredWarning(t *testing.T) {
	c := mustResolve(t, `
state.backend.type: hashmap
state.backend.leveldb.localdir: /x
execution.checkpointing.fsstorage.write-buffer-size: 8kb
execution.checkpointing.jmstorage.dir: /elsewhere
execution.checkpointing.dir: file:///ck
execution.checkpointing.storage: jobmanager
`)
	wantEqual(t, "backend options", c.BackendOptions, sdk.Options{})
	wantEqual(t, "storage options", c.StorageOptions, sdk.Options{"dir": "file:///ck"})
	all := strings.Join(c.Warnings, "\n")
	wantContains(t, all,
		"config.yaml:3: state.backend.leveldb.localdir is ignored: the state backend is hashmap, not leveldb",
		"config.yaml:4: execution.checkpointing.fsstorage.write-buffer-size is ignored: the checkpoint storage is jmstorage, not fsstorage",
		"config.yaml:5: execution.checkpointing.jmstorage.dir is ignored: execution.checkpointing.dir sets dir")
}

func TestRestartAndControl(t *testing.T) {
	c := mustParse(t, "restart-strategy.type: none\nrestart-strategy.fixed-delay.attempts: 4\nrest.port: 0\n")
	wantEqual(t, "type", c.Restart.Type, "none")
	wantContains(t, strings.Join(c.Warnings, "\n"), "config.yaml:2: restart-strategy.fixed-delay.attempts is ignored")
	wantEqual(t, "port only", c.Control.Address, "127.0.0.1:0")
	c = mustParse(t, "rest.address: ::1\n")
	wantEqual(t, "ipv6", c.Control.Address, "[::1]:0")
}

// TestNotUTF8 refuses a file that is not UTF-8 (YAML text is), naming the file and the
// line; before, the flat-line reader accepted such a value, which Migrate could not write.
func TestNotUTF8(t *testing.T) {
	for _, data := range []string{
		"state.checkpoints.num-retained: 3#\njob.name: \x84t",
		"job:\n  name: \xff\xfe\n",
	} {
		wantContains(t, parseErr(t, data), testFile+":2:", "is not UTF-8")
	}
	if _, err := Parse([]byte("job.input: caf\u00e9 \ufffd\n"), testFile); err != nil {
		t.Errorf("valid UTF-8 (with U+FFFD itself) refused: %v", err)
	}
}

package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/config/flinkkeys"
	"github.com/flowstate/flowstate/sdk"
)

// whyCluster is the reason the catalog gives for the keys of a Flink cluster.
const whyCluster = "a Flink cluster setting: the runner is one process with no JobManager or TaskManagers"

// TestCatalogMatchesTheParser: every supported Flink key of the catalog is a key the
// parser reads (and an enum's Flink default one of its values), every alias leads to a key
// or to an option of a built-in plugin, and every refused key's default parses as its kind.
func TestCatalogMatchesTheParser(t *testing.T) {
	for _, e := range flinkkeys.All() {
		switch e.Status {
		case flinkkeys.Supported:
			def, ok := currentKeys[e.Name]
			if !ok {
				t.Errorf("supported %s is not a key the parser reads", e.Name)
			}
			if def.kind == kindEnum && e.Default != "" {
				if _, err := parseEnum(e.Default, def.values); err != nil {
					t.Errorf("supported %s: Flink's default %q is not a value the parser takes: %v", e.Name, e.Default, err)
				}
			}
		case flinkkeys.Alias:
			if _, ok := currentKeys[e.Target]; !ok {
				_, plugin, option, ok := pluginOption(e.Target)
				if p, found := builtins.Lookup(plugin); !ok || !found || !slices.Contains(p.Options, option) {
					t.Errorf("alias %s leads to %s, neither a key nor an option the built-in plugin accepts", e.Name, e.Target)
				}
			}
		case flinkkeys.Refused:
			if e.Default != "" {
				if _, err := normalize(e.Kind, e.Default); err != nil {
					t.Errorf("refused %s: default %q does not parse: %v", e.Name, e.Default, err)
				}
			}
		}
	}
}

// otherValue returns a value of kind that differs from def.
func otherValue(kind flinkkeys.Kind, def string) string {
	switch kind {
	case flinkkeys.KindBool:
		if d, _ := normalize(flinkkeys.KindBool, def); d == "true" {
			return "false"
		}
		return "true"
	case flinkkeys.KindInt:
		return "77"
	case flinkkeys.KindSize:
		return "3mb"
	case flinkkeys.KindDuration:
		return "7 s"
	case flinkkeys.KindFloat:
		return "0.77"
	case flinkkeys.KindEnum:
		return "SOMETHING_ELSE"
	}
	return "/some/value"
}

// catalogFile is a file with the state backend the key needs and the key at line 2.
func catalogFile(e flinkkeys.Key, key, value string) string {
	backend := "hashmap"
	if e.Backend == LevelDB {
		backend = "rocksdb"
	}
	return "state.backend.type: " + backend + "\n" + key + ": " + value + "\n"
}

// TestRefusedFlinkKeys: each key of a feature Flowstate does not implement, under its
// current and deprecated names, loads at Flink's default (and values listed as harmless)
// with a note naming the key and its line, and is refused by name and line otherwise.
func TestRefusedFlinkKeys(t *testing.T) {
	n := 0
	for _, e := range flinkkeys.All() {
		if e.Status != flinkkeys.Refused {
			continue
		}
		for _, key := range append([]string{e.Name}, e.Deprecated...) {
			n++
			for _, ok := range append([]string{e.Default}, e.Also...) {
				if ok == "" {
					continue
				}
				c := mustParse(t, catalogFile(e, key, ok))
				wantContains(t, strings.Join(c.Notes, "\n"), "config.yaml:2: "+key+": "+ok, e.What)
				if key != e.Name {
					wantContains(t, strings.Join(c.Deprecations, "\n"), "config.yaml:2: "+key+" is deprecated: use "+e.Name)
				}
			}
			bad := otherValue(e.Kind, e.Default)
			if slices.Contains(e.Also, bad) {
				continue // every value of the key loads
			}
			_, err := Parse([]byte(catalogFile(e, key, bad)), testFile)
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: %s: want ErrUnsupported, got %v", key, bad, err)
				continue
			}
			wantContains(t, err.Error(), "config.yaml:2: "+key+": not supported: Flowstate does not implement "+e.What)
		}
	}
	if n < 40 {
		t.Fatalf("only %d refused keys checked", n)
	}
}

// TestInertAndIgnoredFlinkKeys: keys that only matter with a refused feature load with a
// note saying so; keys of a Flink cluster load and are listed as ignored with their line
// and reason; neither is taken for a plugin option.
func TestInertAndIgnoredFlinkKeys(t *testing.T) {
	for _, e := range flinkkeys.All() {
		key := e.Name
		if e.Namespace() {
			key += "some.key"
		}
		switch e.Status {
		case flinkkeys.Inert:
			if e.Backend == flinkkeys.ForSt {
				continue // the namespace of a refused backend: see TestFlinkBackends
			}
			c := mustParse(t, catalogFile(e, key, "1"))
			wantContains(t, strings.Join(c.Notes, "\n"), "config.yaml:2: "+key+" has no effect: it only matters with")
		case flinkkeys.Ignored:
			c := mustParse(t, "job.name: x\n"+key+": 1\n")
			if len(c.Ignored) != 1 || c.Ignored[0] != (IgnoredKey{Key: key, Line: 2, Reason: e.What}) {
				t.Errorf("%s: ignored %+v", key, c.Ignored)
			}
			if len(c.BackendOptions)+len(c.StorageOptions) != 0 || len(c.Warnings) != 0 {
				t.Errorf("%s: read as something: options %v %v, warnings %v", key, c.BackendOptions, c.StorageOptions, c.Warnings)
			}
		}
	}
	// A Flink 2.x file nests cluster keys, may give lists and empty values.
	c := mustParse(t, "jobmanager:\n  memory:\n    process:\n      size: 1600m\nio:\n  tmp:\n    dirs: [/a, /b]\nmetrics.reporters:\n")
	if len(c.Ignored) != 3 || c.Ignored[1].Key != "io.tmp.dirs" || c.Ignored[1].Line != 7 {
		t.Fatalf("ignored %+v", c.Ignored)
	}
	wantContains(t, parseErr(t, "execution.checkpointing.interval: [1s, 2s]\n"), "config.yaml:1: execution.checkpointing.interval: bad value", "a list is not allowed")
}

// TestFlinkKeysAreNotPluginOptions: the keys the issue names are not read as options of
// plugins called "unaligned", "local-backup" or "file-merging", nor aligned-checkpoint-
// timeout as an fsstorage option; plugin options are read only for configured plugins.
func TestFlinkKeysAreNotPluginOptions(t *testing.T) {
	c := mustResolve(t, `state.backend.type: rocksdb
execution.checkpointing.dir: /ck
execution.checkpointing.unaligned.enabled: false
execution.checkpointing.local-backup.enabled: false
execution.checkpointing.file-merging.enabled: false
execution.checkpointing.aligned-checkpoint-timeout: 30s
`)
	wantEqual(t, "storage options", c.StorageOptions, sdk.Options{"dir": "/ck"})
	wantEqual(t, "warnings", c.Warnings, []string{})
	wantEqual(t, "notes", len(c.Notes), 5)
	for in, want := range map[string]string{
		"execution.checkpointing.unaligned.x: 1\n": "config.yaml:1: execution.checkpointing.unaligned.x: unknown key: did you mean execution.checkpointing.unaligned.forced? " +
			"(neither a key Flowstate knows nor an option of the configured checkpoint storage (the default): \"unaligned\" is not selected, so its options are not read)",
		"state.backend.type: hashmap\nstate.backend.tikv.cache: 1\n": "(neither a key Flowstate knows " +
			"nor an option of the configured state backend (hashmap): \"tikv\" is not selected, so its options are not read)",
		"state.backend.rocksdb.block-cache-size: 8mb\n":    "state.backend.rocksdb.block-cache-size: unknown key: not one of Flink's RocksDB options: did you mean state.backend.rocksdb.block.cache-size?",
		"execution.checkpointing.unaligned.enable: true\n": "did you mean execution.checkpointing.unaligned.enabled?",
	} {
		wantContains(t, parseErr(t, in), want)
	}
	// Options of a configured third-party plugin, and storage options of a backend that
	// may serve as the storage too, are read.
	c = mustParse(t, "state.backend.type: tikv\nstate.backend.tikv.cache: 1\nexecution.checkpointing.tikv.bucket: b\n")
	wantEqual(t, "backend options", c.backendOpts["tikv"]["cache"].value, "1")
	wantEqual(t, "storage options", c.storageOpts["tikv"]["bucket"].value, "b")
	c = mustParse(t, "execution.checkpointing.storage: faultstorage\nexecution.checkpointing.faultstorage.fault: slow\n")
	wantEqual(t, "configured storage's options", c.StorageOptions["fault"], "slow")
	// Built-in plugins that are not selected keep the warning.
	c = mustResolve(t, "state.backend.leveldb.localdir: /x\n")
	wantContains(t, strings.Join(c.Warnings, "\n"), "config.yaml:1: state.backend.leveldb.localdir is ignored: the state backend is hashmap, not leveldb")
}

// TestFlinkBackends: rocksdb is leveldb (no deprecation), as are Flink's factory class
// names; ForSt is refused; the deprecated key state.backend keeps the seed's table.
func TestFlinkBackends(t *testing.T) {
	for _, v := range []string{"rocksdb", "RocksDB", "org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackendFactory"} {
		c := mustResolve(t, "state.backend.type: "+v+"\n")
		wantEqual(t, v, c.StateBackend, "leveldb")
		wantEqual(t, v+" deprecations", len(c.Deprecations), 0)
		wantContains(t, strings.Join(c.Notes, "\n"), "config.yaml:1: state.backend.type: "+strings.ToLower(v)+" is Flowstate's leveldb plugin")
		wantEqual(t, v+" storage", c.CheckpointStorage, "jmstorage")
	}
	c := mustResolve(t, "state.backend.type: rocksdb\nexecution.checkpointing.dir: /ck\n")
	wantEqual(t, "rocksdb with a dir", c.CheckpointStorage, "fsstorage")
	msg := parseErr(t, "state.backend.type: forst\nstate.backend.forst.cache.size: 1gb\n")
	wantContains(t, msg, "config.yaml:1: state.backend.type: not supported: ForSt")
	c = mustResolve(t, "state.backend.forst.cache.size: 1gb\n")
	wantContains(t, strings.Join(c.Warnings, "\n"), "config.yaml:1: state.backend.forst.cache.size is ignored: the state backend is hashmap, not forst")
	c = mustResolve(t, "state.backend: rocksdb\n")
	wantContains(t, strings.Join(c.Deprecations, "\n"), "state.backend: rocksdb is deprecated: use state.backend.type: leveldb and execution.checkpointing.storage: jmstorage")
}

// TestRocksDBKeys: the RocksDB keys with a leveldb meaning become leveldb options, the
// others load only at Flink's default; with another backend they are ignored with a
// warning, as Flink ignores them.
func TestRocksDBKeys(t *testing.T) {
	c := mustResolve(t, `state.backend.type: rocksdb
state.backend.rocksdb.localdir: ldb
state.backend.rocksdb.block.cache-size: 256mb
state.backend.rocksdb.writebuffer.size: 32mb
state.backend.rocksdb.memory.managed: false
state.backend.rocksdb.predefined-options: default
state.backend.rocksdb.checkpointdir: ldb
`)
	wantEqual(t, "leveldb options", c.BackendOptions, sdk.Options{"localdir": "/etc/flowstate/ldb", "block-cache-size": "256mb", "write-buffer-size": "32mb"})
	notes := strings.Join(c.Notes, "\n")
	wantContains(t, notes, "config.yaml:2: state.backend.rocksdb.localdir (Flink's key) is read as state.backend.leveldb.localdir",
		"config.yaml:5: state.backend.rocksdb.memory.managed: false loads and has no effect", "config.yaml:6: state.backend.rocksdb.predefined-options: default is Flink's default")
	wantContains(t, strings.Join(c.Deprecations, "\n"), "config.yaml:7: state.backend.rocksdb.checkpointdir is deprecated: use state.backend.rocksdb.localdir")
	wantEqual(t, "option key of a plugin error", c.OptionKey(LevelDB, "block-cache-size"), "state.backend.rocksdb.block.cache-size")
	wantContains(t, parseErr(t, "state.backend.type: rocksdb\nstate.backend.rocksdb.localdir: /a,/b\n"),
		`config.yaml:2: state.backend.rocksdb.localdir: bad value "/a,/b": a list of directories, as Flink takes: state.backend.leveldb.localdir takes one directory`)
	c = mustResolve(t, "state.backend.type: hashmap\nstate.backend.rocksdb.thread.num: 8\nstate.backend.rocksdb.localdir: /x\n")
	w := strings.Join(c.Warnings, "\n")
	wantContains(t, w, "config.yaml:2: state.backend.rocksdb.thread.num is ignored: the state backend is hashmap, not rocksdb (leveldb)",
		"config.yaml:3: state.backend.rocksdb.localdir is ignored: the state backend is hashmap, not leveldb")
}

// TestS3AndWriteBufferKeys: Flink's S3 keys and write buffer become fsstorage options.
func TestS3AndWriteBufferKeys(t *testing.T) {
	c := mustResolve(t, `execution.checkpointing.dir: s3://b/ck
s3.endpoint: http://minio:9000
s3.access.key: ak
s3.secret-key: sk
s3.path.style.access: true
execution.checkpointing.write-buffer-size: 4096
s3.connection.maximum: 100
`)
	wantEqual(t, "fsstorage options", c.StorageOptions, sdk.Options{"dir": "s3://b/ck", "s3.endpoint": "http://minio:9000",
		"s3.access-key": "ak", "s3.secret-key": "sk", "s3.path-style": "true", "write-buffer-size": "4096"})
	wantEqual(t, "ignored", c.Ignored, []IgnoredKey{{Key: "s3.connection.maximum", Line: 7, Reason: "a setting of Flink's S3 file system that fsstorage has no option for"}})
	wantContains(t, strings.Join(c.Deprecations, "\n"), "config.yaml:3: s3.access.key is deprecated: use s3.access-key")
	wantContains(t, parseErr(t, "s3.endpoint: a\nexecution.checkpointing.fsstorage.s3.endpoint: b\n"), "conflicting keys: s3.endpoint: a (line 1)")
}

// TestCheckpointingKeys: Flink's checkpointing keys and their defaults and bounds.
func TestCheckpointingKeys(t *testing.T) {
	c := mustParse(t, `execution.checkpointing.mode: at_least_once
execution.checkpointing.min-pause: 2s
execution.checkpointing.max-concurrent-checkpoints: 3
execution.checkpointing.externalized-checkpoint-retention: retain_on_cancellation
`)
	cp := c.Checkpointing
	wantEqual(t, "mode", cp.Mode, ModeAtLeastOnce)
	wantEqual(t, "min-pause", cp.MinPause, 2*time.Second)
	wantEqual(t, "max concurrent", cp.MaxConcurrent, 3)
	wantEqual(t, "retention", cp.Retention, RetainOnCancel)
	for in, want := range map[string]string{
		"execution.checkpointing.mode: EXACTLY\n":                             `config.yaml:1: execution.checkpointing.mode: bad value "EXACTLY": want EXACTLY_ONCE or AT_LEAST_ONCE`,
		"execution.checkpointing.max-concurrent-checkpoints: 0\n":             "want a number from 1 to 64",
		"execution.checkpointing.min-pause: -1s\n":                            `execution.checkpointing.min-pause: bad value "-1s"`,
		"execution.checkpointing.externalized-checkpoint-retention: ALWAYS\n": "want DELETE_ON_CANCELLATION, RETAIN_ON_CANCELLATION or NO_EXTERNALIZED_CHECKPOINTS",
	} {
		wantContains(t, parseErr(t, in), want)
	}
}

// TestStateRecoveryKeys: execution.state-recovery.* and their deprecated 1.x names.
func TestStateRecoveryKeys(t *testing.T) {
	for in, want := range map[string]Recovery{
		"execution.state-recovery.path: latest\n":                                        {Path: "latest", ClaimMode: ClaimNo},
		"execution.state-recovery.path: Latest-If-Any\n":                                 {Path: "latest-if-any", ClaimMode: ClaimNo},
		"execution.state-recovery.path: sp/savepoint-1\n":                                {Path: "/etc/flowstate/sp/savepoint-1", ClaimMode: ClaimNo},
		"execution.savepoint.path: s3://b/sp\nexecution.savepoint-restore-mode: claim\n": {Path: "s3://b/sp", ClaimMode: Claim},
		"execution.state-recovery.path: jm:wc/chk-3\n":                                   {Path: "jm:wc/chk-3", ClaimMode: ClaimNo},
		"execution.state-recovery.ignore-unclaimed-state: true\n":                        {ClaimMode: ClaimNo, IgnoreUnclaimedState: true},
	} {
		wantEqual(t, in, mustParse(t, in).Recovery, want)
	}
	c := mustParse(t, "execution.state-recovery.claim-mode: LEGACY\n")
	wantContains(t, strings.Join(c.Deprecations, "\n"), "config.yaml:1: execution.state-recovery.claim-mode: LEGACY is deprecated")
	wantContains(t, parseErr(t, "execution.state-recovery.claim-mode: MINE\n"), "want NO_CLAIM, CLAIM or LEGACY")
}

// TestRestartKeys: the three strategies with Flink's keys, aliases, bounds and defaults.
func TestRestartKeys(t *testing.T) {
	c := mustResolve(t, `restart-strategy.type: failurerate
restart-strategy.failure-rate.max-failures-per-interval: 3
restart-strategy.failure-rate.failure-rate-interval: 5 min
restart-strategy.failure-rate.delay: 10 s
restart-strategy.fixed-delay.attempts: 4
`)
	wantEqual(t, "type", c.Restart.Type, RestartFailureRate)
	wantEqual(t, "failure rate", c.Restart.FailureRate, FailureRate{MaxFailures: 3, Interval: 5 * time.Minute, Delay: 10 * time.Second})
	wantContains(t, strings.Join(c.Warnings, "\n"), "config.yaml:5: restart-strategy.fixed-delay.attempts is ignored: restart-strategy.type is failure-rate")
	c = mustResolve(t, `restart-strategy.type: exponentialdelay
restart-strategy.exponential-delay.initial-backoff: 2s
restart-strategy.exponential-delay.max-backoff: 2min
restart-strategy.exponential-delay.backoff-multiplier: 2.0
restart-strategy.exponential-delay.reset-backoff-threshold: 30 min
restart-strategy.exponential-delay.jitter-factor: 0
restart-strategy.exponential-delay.attempts-before-reset-backoff: 10
`)
	wantEqual(t, "exponential", c.Restart.ExponentialDelay, ExponentialDelay{InitialBackoff: 2 * time.Second, MaxBackoff: 2 * time.Minute,
		Multiplier: 2, ResetThreshold: 30 * time.Minute, JitterFactor: 0, AttemptsBeforeReset: 10})
	// Keys of one strategy without a type select it, with a note.
	c = mustResolve(t, "restart-strategy.exponential-delay.max-backoff: 5min\n")
	wantEqual(t, "selected by its keys", c.Restart.Type, RestartExponentialDelay)
	wantContains(t, strings.Join(c.Notes, "\n"), "config.yaml:1: restart-strategy.type is not set, so the restart-strategy.exponential-delay.* keys select exponential-delay")
	for in, want := range map[string]string{
		"restart-strategy.fixed-delay.attempts: 1\nrestart-strategy.failure-rate.delay: 1s\n": "config.yaml:2: restart-strategy.failure-rate.delay: conflicting keys: " +
			"restart-strategy.type is not set, and both fixed-delay (restart-strategy.fixed-delay.attempts, line 1) and failure-rate keys are",
		"restart-strategy.exponential-delay.backoff-multiplier: 1\n":                   "want a number greater than 1",
		"restart-strategy.exponential-delay.jitter-factor: 1.5\n":                      "want a number from 0 to 1",
		"restart-strategy.exponential-delay.initial-backoff: 0\n":                      "want at least 1ms",
		"restart-strategy.failure-rate.failure-rate-interval: 0\n":                     "want at least 1ms",
		"restart-strategy.failure-rate.max-failures-per-interval: 0\n":                 "want a number from 1 to",
		"restart-strategy.exponential-delay.attempts-before-reset-backoff: infinite\n": "want a whole number",
		"restart-strategy.type: exponential-delay\nrestart-strategy.exponential-delay.initial-backoff: 2min\n": "config.yaml:2: restart-strategy.exponential-delay.initial-backoff: " +
			"bad value \"2min\": restart-strategy.exponential-delay.initial-backoff (2m0s) exceeds restart-strategy.exponential-delay.max-backoff (1m0s)",
	} {
		wantContains(t, parseErr(t, in), want)
	}
}

// TestJobKeysFromFlink: parallelism.default, pipeline.max-parallelism and pipeline.name.
func TestJobKeysFromFlink(t *testing.T) {
	c := mustParse(t, "parallelism.default: 4\npipeline.max-parallelism: 64\npipeline.name: clicks\n")
	wantEqual(t, "job", []any{c.Job.Parallelism, c.Job.MaxParallelism, c.Job.Name}, []any{4, 64, "clicks"})
	wantContains(t, strings.Join(c.Notes, "\n"), "config.yaml:1: parallelism.default (Flink's key) is read as job.parallelism")
	c = mustParse(t, "parallelism.default: 4\njob.parallelism: 4\n")
	wantEqual(t, "agreeing spellings", c.Job.Parallelism, 4)
	wantContains(t, parseErr(t, "parallelism.default: 4\njob.parallelism: 2\n"), "config.yaml:2: job.parallelism: conflicting keys: parallelism.default: 4 (line 1)")
	wantContains(t, parseErr(t, "execution.runtime-mode: BATCH\n"), "config.yaml:1: execution.runtime-mode: not supported")
}

// TestCommandLineOverrides: -D and -p win over the file, whichever spelling each uses; errors and
// messages about them say they came from the command line; relative paths resolve against
// the working directory; secrets are masked.
func TestCommandLineOverrides(t *testing.T) {
	ov := func(args ...string) []Override {
		var out []Override
		for _, a := range args {
			if n, ok := strings.CutPrefix(a, "-p "); ok {
				out = append(out, Parallelism(n))
				continue
			}
			o, err := ParseDynamic(a)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, o)
		}
		return out
	}
	parse := func(file string, args ...string) (*Config, error) {
		return ParseWith([]byte(file), testFile, ov(args...))
	}
	c, err := parse("state.checkpoints.dir: /a\njob.parallelism: 2\nexecution.checkpointing.interval: 1s\n",
		"execution.checkpointing.dir=ck", "parallelism.default=3", "-p 5", "execution.checkpointing.interval=2s", "execution.checkpointing.interval=3s")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	wantEqual(t, "-D dir over a deprecated file key, relative to the working directory", c.Checkpointing.Dir, filepath.Join(wd, "ck"))
	wantEqual(t, "-p over -D and the file", c.Job.Parallelism, 5)
	wantEqual(t, "the later -D wins", c.Checkpointing.Interval, 3*time.Second)
	wantEqual(t, "no deprecation for the overridden file key", len(c.Deprecations), 0)
	wantEqual(t, "overrides kept in order", len(c.Overrides), 5)
	for args, want := range map[string]string{
		"execution.checkpointing.interval=soon":          `-D execution.checkpointing.interval: bad value "soon"`,
		"execution.checkpointing.intervall=1s":           "-D execution.checkpointing.intervall: unknown key: did you mean execution.checkpointing.interval?",
		"execution.checkpointing.unaligned.enabled=true": "-D execution.checkpointing.unaligned.enabled: not supported",
		"-p 0": "-p job.parallelism: bad value \"0\"",
	} {
		_, err := parse("job.name: x\n", args)
		var ce *Error
		if !errors.As(err, &ce) || ce.Flag == "" || ce.Line != 0 {
			t.Errorf("%s: want an *Error naming its flag, got %#v", args, err)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", args, want, err)
		}
	}
	c, _ = parse("job.name: x\n", "state.checkpoints.num-retained=2", "jobmanager.memory.process.size=1g")
	wantContains(t, strings.Join(c.Deprecations, "\n"), "-D state.checkpoints.num-retained is deprecated")
	wantEqual(t, "ignored -D", c.Ignored, []IgnoredKey{{Key: "jobmanager.memory.process.size", Flag: "-D", Reason: whyCluster}})
	c, _ = parse("state.backend.type: hashmap\n", "state.backend.type=leveldb")
	wantEqual(t, "-D backend", c.StateBackendSource(), "command line (-D)")
	if err := Resolve(c, nil); err != nil {
		t.Fatal(err)
	}
	wantEqual(t, "where", c.Locate("state.backend.type"), "-D state.backend.type")
	wantEqual(t, "masked", fmt.Sprint(ov("s3.secret-key=abc", "security.ssl.keystore-password=x", "-p 2")), "[-D s3.secret-key=****** -D security.ssl.keystore-password=****** -p 2]")
	if _, err := ParseDynamic("novalue"); err == nil {
		t.Error("-D without = was accepted")
	}
}

// TestFlatFlinkLines: a Flink 1.x flink-conf.yaml that is not YAML is read line by line, as
// Flink 1.x read it; a broken nested YAML file keeps its YAML error.
func TestFlatFlinkLines(t *testing.T) {
	c := mustParse(t, "# comment\njobmanager.rpc.address: @host\nstate.backend.type: leveldb # trailing\nexecution.checkpointing.interval: 5 s\n")
	wantEqual(t, "backend", c.StateBackend, "leveldb")
	wantEqual(t, "interval", c.Checkpointing.Interval, 5*time.Second)
	wantEqual(t, "ignored", c.Ignored, []IgnoredKey{{Key: "jobmanager.rpc.address", Line: 2, Reason: whyCluster}})
	wantContains(t, strings.Join(c.Notes, "\n"), "not valid YAML: read line by line")
	wantContains(t, parseErr(t, "job:\n  name: @x\n"), "yaml:")
}

// TestDisaggregatedS3Options: the disaggregated backend takes the S3 client's options below
// its own name, as fsstorage does below its; Flink's s3.* keys stay fsstorage's.
func TestDisaggregatedS3Options(t *testing.T) {
	c := mustResolve(t, `state.backend.type: disaggregated
state.backend.disaggregated.remote: s3://b/tables
state.backend.disaggregated.s3.endpoint: http://minio:9000
state.backend.disaggregated.s3.region: eu-west-1
state.backend.disaggregated.s3.access-key: ak
state.backend.disaggregated.s3.secret-key: sk
state.backend.disaggregated.s3.path-style: true
state.backend.disaggregated.s3.part-size: 16mb
execution.checkpointing.dir: s3://b/ck
s3.endpoint: http://other:9000
`)
	wantEqual(t, "disaggregated options", c.BackendOptions, sdk.Options{"remote": "s3://b/tables", "s3.endpoint": "http://minio:9000",
		"s3.region": "eu-west-1", "s3.access-key": "ak", "s3.secret-key": "sk", "s3.path-style": "true", "s3.part-size": "16mb"})
	wantEqual(t, "Flink's s3.endpoint", c.StorageOptions["s3.endpoint"], "http://other:9000")
}

package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// Config is a loaded configuration file. Parse fills it from the file and defaults; Apply
// layers what code sets on top; Resolve picks the plugins by Flink's loader rules.
type Config struct {
	// File is the configuration file's name, as given to Load or Parse.
	File string
	// StateBackend is the state backend plugin's name: "hashmap" by default; deprecated
	// values are mapped (rocksdb -> leveldb, jobmanager/filesystem -> hashmap).
	StateBackend string
	// CheckpointStorage is the checkpoint storage plugin's name: jmstorage for Flink's
	// "jobmanager", fsstorage for "filesystem". After Parse it is "" when neither set nor
	// implied by a deprecated state.backend value; Resolve always sets it.
	CheckpointStorage string
	// StorageFromBackend is set by Resolve when the state backend plugin also implements
	// CheckpointStorage and serves as the storage because none is configured.
	StorageFromBackend bool
	// BackendOptions are the state backend plugin's options: the keys under
	// state.backend.<name>. with that prefix removed, plus sdk.OptionIncremental when
	// execution.checkpointing.incremental is set.
	BackendOptions sdk.Options
	// StorageOptions are the checkpoint storage plugin's options: the keys under
	// execution.checkpointing.<name>. with that prefix removed, plus sdk.OptionCheckpointDir,
	// sdk.OptionSavepointDir and sdk.OptionDataInlineThreshold (bytes) when set.
	StorageOptions sdk.Options
	// Checkpointing holds the execution.checkpointing.* settings.
	Checkpointing Checkpointing
	// Plugins holds the plugins.* settings.
	Plugins Plugins
	// Job holds the job.* settings.
	Job Job
	// Restart holds the restart-strategy.* and execution.recovery.* settings.
	Restart Restart
	// Recovery holds the execution.state-recovery.* settings.
	Recovery Recovery
	// Control holds the rest.* settings.
	Control Control
	// Heartbeat holds the heartbeat.* settings.
	Heartbeat Heartbeat
	// Memory holds the runner.memory.* settings.
	Memory Memory
	// NATS holds the nats.* settings, JetStreamSource the source.jetstream.* and
	// JetStreamSink the sink.jetstream.* ones: the JetStream connectors of the built-in
	// jobs (job.source, job.sink: jetstream).
	NATS            NATS
	JetStreamSource JetStreamSource
	JetStreamSink   JetStreamSink
	// Cluster holds the cluster.* settings: distributed mode.
	Cluster Cluster
	// Overrides are the keys set on the command line (-D, -p), in the order applied.
	Overrides []Override
	// Deprecations has one message per deprecated key or value used, naming the replacement.
	Deprecations []string
	// Warnings are things that load but probably do not do what the user meant.
	Warnings []string
	// Notes say how Flink keys were read: Flink keys read as Flowstate keys (aliases), and
	// keys that load without effect (a feature Flowstate does not implement, kept off).
	Notes []string
	// Ignored are the keys that only concern a Flink cluster: they load and have no effect.
	Ignored []IgnoredKey

	// Provenance says where each key was set: its line in the file, the flag that set it,
	// the key as written, and what chose the plugins.
	Provenance

	backendOpts   map[string]map[string]optValue
	storageOpts   map[string]map[string]optValue
	storageSet    string // configured (or legacy-implied) storage before Resolve
	storageImpl   string // written key of the legacy state.backend value that implied storageSet
	storageAuto   bool   // the legacy value implied "fsstorage if a dir is set, else jmstorage"
	inlineSet     bool
	incrSet       bool
	parseWarnings []string
	// restartDefault: no restart key is set, so the strategy is Flink's default for the
	// final checkpoint interval (Resolve sets Restart.Type).
	restartDefault bool
}

// Checkpointing holds the execution.checkpointing.* settings.
type Checkpointing struct {
	// Interval between periodic checkpoints; 0 means no periodic checkpoints.
	Interval time.Duration
	// Timeout after which a checkpoint in progress is aborted (default 10 minutes).
	Timeout time.Duration
	// NumRetained is how many completed checkpoints are kept (default 1).
	NumRetained int
	// TolerableFailed is how many consecutive checkpoint failures are tolerated (default 0).
	TolerableFailed int
	// Incremental asks the state backend for incremental checkpoints.
	Incremental bool
	// Dir is the checkpoint directory (absolute path or URI), "" when not set.
	Dir string
	// SavepointDir is the default savepoint directory, "" when not set.
	SavepointDir string
	// DataInlineThreshold is the size in bytes below which state is stored inside the
	// checkpoint metadata (default 20 KiB).
	DataInlineThreshold int64
	// SharedFilesystem declares that Dir survives losing this machine.
	SharedFilesystem bool
	// Mode is ModeExactlyOnce (default: barriers align) or ModeAtLeastOnce.
	Mode string
	// MinPause is the least time between the completion of a checkpoint and the trigger
	// of the next periodic one (default 0).
	MinPause time.Duration
	// MaxConcurrent is how many checkpoints may be in flight at once (default 1).
	MaxConcurrent int
	// Retention says what happens to the job's checkpoints when it is cancelled (runner
	// stop without a savepoint): DeleteOnCancel and RetainNever (Flink's
	// default) delete them, RetainOnCancel keeps them. Checkpoints are kept when a run fails
	// or finishes, whatever the value.
	Retention string
}

// Recovery holds the execution.state-recovery.* settings.
type Recovery struct {
	// Path is the checkpoint or savepoint to start from when runner run has no --from:
	// "latest", "latest-if-any" or a pointer; "" starts fresh.
	Path string
	// ClaimMode is ClaimNo (default), Claim or ClaimLegacy. It applies to a restore from a
	// pointer; --from latest resumes the job's own checkpoints and always owns them.
	ClaimMode string
	// IgnoreUnclaimedState lets a restore drop the state of operators the job no longer
	// has (Flink's execution.state-recovery.ignore-unclaimed-state, the CLI's
	// --allow-non-restored-state); false refuses such a restore.
	IgnoreUnclaimedState bool
}

// Plugins holds the plugins.* settings.
type Plugins struct {
	// Dir is the plugin directory; "" means the runner's default.
	Dir string
	// Checksums pins plugin binaries by name.
	Checksums map[string]string
	// AllowOutsideDir names the plugins whose symlink may lead out of Dir
	// (plugins.allow-outside-dir, comma-separated).
	AllowOutsideDir []string
}

// Heartbeat holds the heartbeat.* settings (Flink's TaskManager heartbeat): the runner
// pings each plugin process every Interval (default 10s) and kills one that has not
// answered for Timeout (default 50s).
type Heartbeat struct {
	Interval, Timeout time.Duration
}

// Memory holds the runner.memory.* settings, Flowstate's own: the Go garbage collector's
// knobs for the runner binary's process, which it sets once at start (runner.ApplyMemory).
type Memory struct {
	// Limit is the process's soft memory limit in bytes (debug.SetMemoryLimit, like
	// GOMEMLIMIT); 0 sets none. Default 256 MiB, or half the memory the machine can still
	// spare when that is less.
	Limit int64
	// GOGC is the collector's percent (debug.SetGCPercent, like GOGC): the heap may grow
	// by this percent of the live data before a collection. GOGCOff (the default) leaves
	// collection to the memory limit alone.
	GOGC int
}

// GOGCOff is Memory.GOGC for "off": collect only as the memory limit nears.
const GOGCOff = -1

// ParseGOGC reads runner.memory.gogc: "off", or a percent from 1 to 100000.
func ParseGOGC(s string) (int, error) {
	if strings.EqualFold(strings.TrimSpace(s), "off") {
		return GOGCOff, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 || n > 100000 {
		return 0, fmt.Errorf("want off or a percent from 1 to 100000")
	}
	return n, nil
}

// Job holds the job.* settings.
type Job struct {
	Name           string
	Type           string // default "wordcount"
	Parallelism    int    // default 1
	MaxParallelism int    // default 128
	Input, Output  string // absolute paths (or URIs) when set
	// Source and Sink are the built-in job's connectors: ConnectorFile (the default:
	// job.input, job.output) or ConnectorJetStream.
	Source, Sink  string
	Rate          float64
	Keys, Records int64
	BatchSize     int // default 1024
	// LeaseTimeout is how long the job's lease stays live after its runner's last
	// renewal (default 30s, at least 1s).
	LeaseTimeout time.Duration
}

// Restart holds the restart strategy (restart-strategy.*) and recovery settings.
type Restart struct {
	// Type is RestartExponentialDelay, RestartFixedDelay, RestartFailureRate or
	// RestartNone. Without restart keys it is Flink's default, set by Resolve:
	// exponential-delay when a checkpoint interval is set, else none.
	Type string
	// Attempts is restart-strategy.fixed-delay.attempts: fixed-delay restarts at most this
	// many times in a run (Flink's default 1).
	Attempts int
	// Delay is restart-strategy.fixed-delay.delay, the wait before each restart (1s).
	Delay time.Duration
	// FailureRate is restart-strategy.failure-rate.*.
	FailureRate FailureRate
	// ExponentialDelay is restart-strategy.exponential-delay.*.
	ExponentialDelay ExponentialDelay
	// StartOverOnCheckpointLoss lets a job start from scratch when no checkpoint can be
	// restored, instead of failing.
	StartOverOnCheckpointLoss bool
	// CancellationTimeout bounds how long an attempt may take to end once cancelled before
	// the runner kills the plugin processes that hold it up (default 30s; 0: never).
	CancellationTimeout time.Duration
}

// FailureRate is the failure-rate strategy: restart after Delay unless more than
// MaxFailures failures fall within Interval.
type FailureRate struct {
	MaxFailures int           // max-failures-per-interval (1)
	Interval    time.Duration // failure-rate-interval (1 min)
	Delay       time.Duration // delay (1s)
}

// ExponentialDelay is the exponential-delay strategy: the wait starts at InitialBackoff and
// grows by Multiplier up to MaxBackoff, give or take JitterFactor of it; a run that went
// ResetThreshold without failing starts again at InitialBackoff; more than
// AttemptsBeforeReset restarts without such a reset fail the job.
type ExponentialDelay struct {
	InitialBackoff      time.Duration // initial-backoff (1s)
	MaxBackoff          time.Duration // max-backoff (1 min)
	Multiplier          float64       // backoff-multiplier (1.5)
	ResetThreshold      time.Duration // reset-backoff-threshold (1h)
	JitterFactor        float64       // jitter-factor (0.1)
	AttemptsBeforeReset int           // attempts-before-reset-backoff (2147483647)
}

// optValue is one plugin option as configured.
type optValue struct {
	value string
	key   string // the key as written; "" when set in code
	line  int
	flag  string // the flag that set it on the command line, "" for the file
}

// Defaults.
const (
	DefaultStateBackend        = Hashmap
	DefaultTimeout             = 10 * time.Minute
	DefaultNumRetained         = 1
	DefaultDataInlineThreshold = 20 << 10
	DefaultParallelism         = 1
	DefaultMaxParallelism      = 128
	DefaultBatchSize           = 1024
	DefaultJobType             = "wordcount"
	DefaultMaxConcurrent       = 1
	DefaultRestartAttempts     = 1
	DefaultRestartDelay        = time.Second
	DefaultCancellationTimeout = 30 * time.Second
	DefaultHeartbeatInterval   = 10 * time.Second
	DefaultHeartbeatTimeout    = 50 * time.Second
	DefaultRestAddress         = "127.0.0.1"
	DefaultRestPort            = 0 // an ephemeral port, found through the job's lease
	DefaultLeaseTimeout        = 30 * time.Second
	DefaultMemoryLimit         = 256 << 20
	MinLeaseTimeout            = time.Second
)

// defaults returns a Config holding only defaults.
func defaults(file string) *Config {
	c := &Config{
		File:         file,
		StateBackend: DefaultStateBackend,
		Checkpointing: Checkpointing{
			Timeout:             DefaultTimeout,
			NumRetained:         DefaultNumRetained,
			DataInlineThreshold: DefaultDataInlineThreshold,
			Mode:                ModeExactlyOnce,
			MaxConcurrent:       DefaultMaxConcurrent,
			Retention:           RetainNever,
		},
		Recovery: Recovery{ClaimMode: ClaimNo},
		Plugins:  Plugins{Checksums: map[string]string{}},
		Job: Job{
			Type:           DefaultJobType,
			Parallelism:    DefaultParallelism,
			MaxParallelism: DefaultMaxParallelism,
			BatchSize:      DefaultBatchSize,
			LeaseTimeout:   DefaultLeaseTimeout,
		},
		Restart:      defaultRestartSettings(),
		Control:      Control{Address: net.JoinHostPort(DefaultRestAddress, strconv.Itoa(DefaultRestPort))},
		Heartbeat:    Heartbeat{Interval: DefaultHeartbeatInterval, Timeout: DefaultHeartbeatTimeout},
		Memory:       Memory{Limit: DefaultMemoryLimit, GOGC: GOGCOff},
		Provenance:   newProvenance(file),
		backendOpts:  map[string]map[string]optValue{},
		storageOpts:  map[string]map[string]optValue{},
		Deprecations: []string{},
		Warnings:     []string{},
		Notes:        []string{},
		Ignored:      []IgnoredKey{},
	}
	defaultConnectors(c)
	c.Cluster = Cluster{Bucket: DefaultClusterBucket, Replicas: DefaultClusterReplicas}
	return c
}

// defaultRestartSettings are Flink's defaults of every restart strategy; the strategy
// itself is left for Resolve.
func defaultRestartSettings() Restart {
	return Restart{
		Attempts: DefaultRestartAttempts, Delay: DefaultRestartDelay,
		FailureRate: FailureRate{MaxFailures: 1, Interval: time.Minute, Delay: time.Second},
		ExponentialDelay: ExponentialDelay{InitialBackoff: time.Second, MaxBackoff: time.Minute, Multiplier: 1.5,
			ResetThreshold: time.Hour, JitterFactor: 0.1, AttemptsBeforeReset: 1<<31 - 1},
		CancellationTimeout: DefaultCancellationTimeout,
	}
}

// Load reads, parses and validates a configuration file.
func Load(path string) (*Config, error) { return LoadWith(path, nil) }

// OptionKey returns the full configuration key of a plugin option, as written in the file
// when the file sets it, for example ("leveldb", "block-cache-size") ->
// "state.backend.leveldb.block-cache-size" and ("fsstorage", "dir") ->
// "execution.checkpointing.dir". With Line it turns a plugin's *sdk.OptionError into a
// message naming the file's line.
func (c *Config) OptionKey(plugin, option string) string {
	storage := plugin == c.CheckpointStorage || plugin == c.storageSet
	backend := plugin == c.StateBackend
	if storage {
		switch option {
		case sdk.OptionCheckpointDir:
			return c.Written(KeyCheckpointDir)
		case sdk.OptionSavepointDir:
			return c.Written(KeySavepointDir)
		case sdk.OptionDataInlineThreshold:
			return c.Written(KeyDataInlineThreshold)
		}
		if o, ok := c.storageOpts[plugin][option]; ok && o.key != "" {
			return o.key
		}
	}
	if backend {
		if option == sdk.OptionIncremental {
			return c.Written(KeyIncremental)
		}
		if o, ok := c.backendOpts[plugin][option]; ok && o.key != "" {
			return o.key
		}
		if !storage {
			return backendOptionPrefix + plugin + "." + option
		}
	}
	if storage || plugin == JMStorage || plugin == FSStorage {
		return storageOptionPrefix + plugin + "." + option
	}
	return backendOptionPrefix + plugin + "." + option
}

// JobName is the job's id: job.name, else job.type.
func (c *Config) JobName() string {
	if c.Job.Name != "" {
		return c.Job.Name
	}
	return c.Job.Type
}

// warnf adds a parse-time warning.
func (c *Config) warnf(format string, args ...any) {
	c.parseWarnings = append(c.parseWarnings, fmt.Sprintf(format, args...))
}

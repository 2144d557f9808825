package runner

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/sdk"
)

// StateBackend selects a state backend plugin in code.
type StateBackend struct {
	name string
	opts sdk.Options
}

// HashMapStateBackend keeps working state in the hashmap plugin's heap.
func HashMapStateBackend() StateBackend { return StateBackend{name: config.Hashmap} }

// EmbeddedLevelDBStateBackend keeps working state in leveldb files under localDir on the
// local disk ("" for the plugin's default). Like Flink's embedded RocksDB, it is not
// durable by itself: checkpoints are.
func EmbeddedLevelDBStateBackend(localDir string) StateBackend {
	b := StateBackend{name: config.LevelDB, opts: sdk.Options{}}
	if localDir != "" {
		b.opts["localdir"] = localDir
	}
	return b
}

// PluginStateBackend selects any state backend plugin by name, with its options.
func PluginStateBackend(name string, opts sdk.Options) StateBackend {
	return StateBackend{name: name, opts: opts}
}

// CheckpointStorage selects a checkpoint storage plugin in code.
type CheckpointStorage struct {
	name string
	opts sdk.Options
	dir  string
}

// JobManagerCheckpointStorage keeps checkpoints in the jmstorage plugin's memory; with a
// path it also writes each checkpoint's metadata (state inlined) there.
func JobManagerCheckpointStorage(path ...string) CheckpointStorage {
	s := CheckpointStorage{name: config.JMStorage}
	if len(path) > 0 {
		s.dir = path[0]
	}
	return s
}

// FileSystemCheckpointStorage writes checkpoints under dir (a path or a URI) through the
// fsstorage plugin.
func FileSystemCheckpointStorage(dir string) CheckpointStorage {
	return CheckpointStorage{name: config.FSStorage, dir: dir}
}

// PluginCheckpointStorage selects any checkpoint storage plugin by name, with its options.
func PluginCheckpointStorage(name string, opts sdk.Options) CheckpointStorage {
	return CheckpointStorage{name: name, opts: opts}
}

// Environment runs jobs, like Flink's StreamExecutionEnvironment: what is set on it in
// code wins over its configuration file, and the file over defaults.
type Environment struct {
	conf      *config.Config
	overrides config.Overrides
	cp        CheckpointConfig
	builtins  map[string]func() sdk.Plugin
	inProcess bool
	logger    hclog.Logger
	errs      []error
}

// NewEnvironment returns an environment configured by a configuration file, or by
// defaults when file is "".
func NewEnvironment(file string) (*Environment, error) {
	var conf *config.Config
	var err error
	if file == "" {
		conf, err = config.Parse(nil, "")
	} else {
		conf, err = config.Load(file)
	}
	if err != nil {
		return nil, err
	}
	return &Environment{conf: conf, logger: hclog.New(&hclog.LoggerOptions{Name: "flowstate", Output: os.Stderr})}, nil
}

// Config returns the configuration, for reading.
func (e *Environment) Config() *config.Config { return e.conf }

// JetStreamSource returns the JetStream source the environment's configuration describes
// (nats.* and source.jetstream.*), for a custom job to read from with dataflow.FromSource:
// its records are the messages' payloads as strings (set its Decode for another record).
// An error names the key that is wrong.
func (e *Environment) JetStreamSource() (*jetstream.Source, error) {
	src, err := jetstream.SourceFromConfig(e.conf)
	if err != nil {
		return nil, err
	}
	src.Logger = e.logger // what it skips is logged, as its keys say
	return src, nil
}

// JetStreamSink returns the exactly-once JetStream sink the environment's configuration
// describes (nats.* and sink.jetstream.*) for the job named job (the name is in the
// sink's marker subjects, so give the job's own). A record's key, for a subject template,
// is what its Key method returns (jetstream.Keyed), else set the sink's Format. An error
// names the key that is wrong.
func (e *Environment) JetStreamSink(job string) (*jetstream.Sink, error) {
	return jetstream.SinkFromConfig(e.conf, job)
}

// SetLogger sets the logger runs report to.
func (e *Environment) SetLogger(l hclog.Logger) { e.logger = l }

// SetStateBackend chooses where working state lives.
func (e *Environment) SetStateBackend(b StateBackend) {
	e.overrides.StateBackend, e.overrides.BackendOptions = b.name, b.opts
}

// SetDefaultSavepointDirectory sets where savepoints go when no target is given.
func (e *Environment) SetDefaultSavepointDirectory(dir string) { e.overrides.SavepointDir = dir }

// SetPluginDir sets the directory plugins are loaded from.
func (e *Environment) SetPluginDir(dir string) { e.overrides.PluginDir = dir }

// UseInProcess runs the given plugins inside this process, through the same SDK
// interfaces, instead of starting their binaries (tests, benchmarks, embedding).
func (e *Environment) UseInProcess(builtins map[string]func() sdk.Plugin) {
	e.builtins, e.inProcess = builtins, true
}

// CheckpointConfig returns the checkpointing settings to change in code.
func (e *Environment) CheckpointConfig() *CheckpointConfig {
	e.cp.env = e
	return &e.cp
}

// CheckpointConfig holds checkpointing settings set in code.
type CheckpointConfig struct {
	env       *Environment
	interval  *time.Duration
	retained  *int
	retention *string
}

// SetCheckpointStorage chooses where checkpoints are made durable. It takes a
// CheckpointStorage value, or a string: the shortcut for FileSystemCheckpointStorage at
// that path or URI.
func (c *CheckpointConfig) SetCheckpointStorage(storage any) {
	e := c.env
	switch s := storage.(type) {
	case string:
		e.overrides.CheckpointStorage, e.overrides.CheckpointDir = config.FSStorage, s
	case CheckpointStorage:
		e.overrides.CheckpointStorage, e.overrides.StorageOptions = s.name, s.opts
		if s.dir != "" {
			e.overrides.CheckpointDir = s.dir
		}
	default:
		e.errs = append(e.errs, fmt.Errorf("SetCheckpointStorage: want a CheckpointStorage or a string, got %T", storage))
	}
}

// SetCheckpointInterval sets the time between periodic checkpoints (0: only the final
// checkpoint of a bounded job).
func (c *CheckpointConfig) SetCheckpointInterval(d time.Duration) { c.interval = &d }

// SetNumRetained sets how many completed checkpoints are kept.
func (c *CheckpointConfig) SetNumRetained(n int) { c.retained = &n }

// SetExternalizedCheckpointRetention sets what happens to the job's checkpoints when it is
// cancelled (Flink's CheckpointConfig.setExternalizedCheckpointRetention):
// config.RetainOnCancel keeps them, so --from latest resumes an interrupted run;
// config.DeleteOnCancel and Flink's default config.RetainNever delete them.
func (c *CheckpointConfig) SetExternalizedCheckpointRetention(retention string) {
	c.retention = &retention
}

// Resolved applies what was set in code to the configuration and picks the plugins.
func (e *Environment) Resolved(ctx context.Context, host *pluginhost.Host) (*config.Config, error) {
	if len(e.errs) > 0 {
		return nil, e.errs[0]
	}
	if err := e.conf.Apply(e.overrides); err != nil {
		return nil, err
	}
	if e.cp.interval != nil {
		e.conf.Checkpointing.Interval = *e.cp.interval
	}
	if e.cp.retained != nil {
		e.conf.Checkpointing.NumRetained = *e.cp.retained
	}
	if e.cp.retention != nil {
		if err := e.conf.SetRetention(*e.cp.retention); err != nil {
			return nil, err
		}
	}
	if err := config.Resolve(e.conf, KindsOf(ctx, host, e.conf.Restart, e.logger)); err != nil {
		return nil, err
	}
	return e.conf, nil
}

// Host returns a plugin host for the environment's plugin directory and in-process
// plugins.
func (e *Environment) Host() *pluginhost.Host {
	return pluginhost.New(pluginhost.Options{
		Dir: e.conf.Plugins.Dir, Checksums: e.conf.Plugins.Checksums, Logger: e.logger,
		Builtins: e.builtins, InProcess: e.inProcess, AllowOutsideDir: e.conf.Plugins.AllowOutsideDir,
		HeartbeatInterval: e.conf.Heartbeat.Interval, HeartbeatTimeout: e.conf.Heartbeat.Timeout,
	})
}

// Execute runs job as `runner run` runs a built-in job (see Launch): with its control
// endpoint (savepoint, stop, status, metrics, checkpoint statistics, web page), its leases,
// the restart strategy, and a bounded end once ctx is cancelled. from "" starts fresh (or
// from execution.state-recovery.path), FromLatest resumes from the newest completed
// checkpoint (FromLatestIfAny too, and starts fresh when there is none), anything else is a checkpoint or savepoint pointer. `runner status`,
// `runner savepoint` and `runner stop` reach it with --config of its configuration file
// and --job of its name.
func (e *Environment) Execute(ctx context.Context, job *dataflow.Job, from string) error {
	host := e.Host()
	defer host.Close()
	conf, err := e.Resolved(ctx, host)
	if err != nil {
		return err
	}
	l := &Launch{Config: conf, Host: host, Logger: e.logger, From: from}
	return l.Run(ctx, job)
}

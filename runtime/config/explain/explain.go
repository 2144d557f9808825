// Package explain says what a loaded configuration means, in the seed's terms: where
// working state lives, that a state backend alone is not durable, where checkpoints go and
// whether they survive losing this machine, how the job restores and restarts, and how the
// control endpoint is protected. It owns the Explanation (runner config explain, with its
// text and JSON forms), the Failure of a configuration that does not load, and the look at
// the machine's mount table (/proc/mounts) that tells local disk, memory and network file
// systems apart.
//
// Dependency rule: explain imports runtime/config and runtime/builtins, never the reverse;
// it imports no plugin (nothing under plugins/) and nothing of the runner.
package explain

import (
	"fmt"
	"strings"

	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/sdk/bytesize"
)

// Explanation says what a configuration means, in the seed's terms: where working state
// lives, that the state backend alone is not durable, and where checkpoints go and whether
// they survive losing this machine.
type Explanation struct {
	ConfigFile string `json:"config_file"`
	// Valid is true: the configuration loaded (a Failure reports one that did not).
	Valid bool `json:"valid"`
	// Errors is empty: a configuration that loads has none.
	Errors []config.ErrorEntry `json:"errors"`
	// StateBackend and CheckpointStorage are the resolved plugin names.
	StateBackend            string `json:"state_backend"`
	StateBackendSource      string `json:"state_backend_source"`
	CheckpointStorage       string `json:"checkpoint_storage"`
	CheckpointStorageSource string `json:"checkpoint_storage_source"`
	// StorageFromBackend: the state backend plugin also serves as the checkpoint storage.
	StorageFromBackend bool `json:"storage_from_backend"`
	// WorkingState says where working state lives while the job runs.
	WorkingState string `json:"working_state"`
	// WorkingStateDir is the leveldb working directory, when configured.
	WorkingStateDir string `json:"working_state_dir,omitempty"`
	// StateBackendDurable is always false: a state backend alone is not durable.
	StateBackendDurable bool   `json:"state_backend_durable"`
	CheckpointDir       string `json:"checkpoint_dir"`
	SavepointDir        string `json:"savepoint_dir"`
	// Checkpoints says where checkpoints go.
	Checkpoints string `json:"checkpoints"`
	// Durable: checkpoints outlive the runner process. Null when a third-party plugin decides.
	Durable *bool `json:"durable"`
	// SurvivesMachineLoss: checkpoints outlive this machine. Null when a third-party plugin
	// decides.
	SurvivesMachineLoss        *bool  `json:"survives_machine_loss"`
	Interval                   string `json:"interval"`
	IntervalMillis             int64  `json:"interval_ms"`
	Timeout                    string `json:"timeout"`
	NumRetained                int    `json:"num_retained"`
	TolerableFailedCheckpoints int    `json:"tolerable_failed_checkpoints"`
	Incremental                bool   `json:"incremental"`
	DataInlineThreshold        int64  `json:"data_inline_threshold"`
	// Mode is execution.checkpointing.mode; MinPause and MaxConcurrent its min-pause and
	// max-concurrent-checkpoints.
	Mode                     string `json:"checkpointing_mode"`
	MinPause                 string `json:"min_pause"`
	MinPauseMillis           int64  `json:"min_pause_ms"`
	MaxConcurrentCheckpoints int    `json:"max_concurrent_checkpoints"`
	Retention                string `json:"retention"`
	// ExternalizedRetention is execution.checkpointing.externalized-checkpoint-retention;
	// OnCancel says what it does when the job is cancelled.
	ExternalizedRetention string `json:"externalized_checkpoint_retention"`
	OnCancel              string `json:"on_cancel"`
	Savepoints            string `json:"savepoints"`
	// RestorePath is execution.state-recovery.path, ClaimMode its claim mode; Restore says
	// what a run starts from and who owns a restored checkpoint.
	RestorePath string `json:"restore_path"`
	ClaimMode   string `json:"claim_mode"`
	Restore     string `json:"restore"`
	// RestartStrategy is the restart strategy's name; Restart describes it.
	RestartStrategy string `json:"restart_strategy"`
	Restart         string `json:"restart"`
	// ControlAccess is how the control endpoint is protected: "loopback", "tls" or
	// "plaintext-risk-accepted"; ControlEndpoint says it in words (no secret).
	ControlAccess   string `json:"control_endpoint_access"`
	ControlEndpoint string `json:"control_endpoint"`
	// JobName, Parallelism and MaxParallelism are the job's (job.*, parallelism.default,
	// -p).
	JobName        string `json:"job_name"`
	Parallelism    int    `json:"parallelism"`
	MaxParallelism int    `json:"max_parallelism"`
	PluginDir      string `json:"plugin_dir"`
	// Source and Sink say what the built-in job reads and writes (job.source, job.sink)
	// and what that means for durability; no secret is in them.
	Source string `json:"source"`
	Sink   string `json:"sink"`
	// Runners says who runs the job: this runner alone, or every runner of its group in
	// distributed mode (cluster.*).
	Runners string `json:"runners"`
	// Overrides are the -D and -p settings of the command line, secrets masked.
	Overrides []string `json:"overrides"`
	// Deprecations has one message per deprecated key or value used.
	Deprecations []string `json:"deprecations"`
	// Warnings are the configuration's warnings and the misunderstandings the seed lists.
	Warnings []string `json:"warnings"`
	// Notes say how Flink keys were read (aliases, and keys that load without effect).
	Notes []string `json:"notes"`
	// Ignored lists the keys that only concern a Flink cluster.
	Ignored []config.IgnoredKey `json:"ignored"`
}

// Config describes a configuration. Call config.Resolve first; on an unresolved
// configuration Config assumes the default storage rule without a dual-role backend.
func Config(c *config.Config) Explanation {
	storage := c.CheckpointStorage
	storageSrc := c.CheckpointStorageSource()
	if storage == "" {
		storage, storageSrc = config.JMStorage, "default"
		if c.Checkpointing.Dir != "" {
			storage, storageSrc = config.FSStorage, "default: a checkpoint dir is set"
		}
	}
	cp := c.Checkpointing
	e := Explanation{
		ConfigFile:                 c.File,
		Valid:                      true,
		Errors:                     []config.ErrorEntry{},
		StateBackend:               c.StateBackend,
		StateBackendSource:         c.StateBackendSource(),
		CheckpointStorage:          storage,
		CheckpointStorageSource:    storageSrc,
		StorageFromBackend:         c.StorageFromBackend,
		CheckpointDir:              cp.Dir,
		SavepointDir:               cp.SavepointDir,
		Interval:                   "off",
		IntervalMillis:             cp.Interval.Milliseconds(),
		Timeout:                    cp.Timeout.String(),
		NumRetained:                cp.NumRetained,
		TolerableFailedCheckpoints: cp.TolerableFailed,
		Incremental:                cp.Incremental,
		DataInlineThreshold:        cp.DataInlineThreshold,
		Mode:                       cp.Mode,
		MinPause:                   cp.MinPause.String(),
		MinPauseMillis:             cp.MinPause.Milliseconds(),
		MaxConcurrentCheckpoints:   cp.MaxConcurrent,
		ExternalizedRetention:      cp.Retention,
		RestorePath:                c.Recovery.Path,
		ClaimMode:                  c.Recovery.ClaimMode,
		RestartStrategy:            c.Restart.Type,
		ControlAccess:              c.Control.Access(),
		ControlEndpoint:            c.Control.Exposure(),
		JobName:                    c.JobName(),
		Parallelism:                c.Job.Parallelism,
		MaxParallelism:             c.Job.MaxParallelism,
		PluginDir:                  c.Plugins.Dir,
		Overrides:                  overrideTexts(c.Overrides),
		Deprecations:               append([]string{}, c.Deprecations...),
		Warnings:                   append([]string{}, c.Warnings...),
		Notes:                      append([]string{}, c.Notes...),
		Ignored:                    append([]config.IgnoredKey{}, c.Ignored...),
	}
	if e.PluginDir == "" {
		e.PluginDir = "(default: plugins/ beside the runner binary)"
	}
	e.explainBackend(c)
	e.explainStorage(c)
	e.explainSchedule(c)
	e.explainConnectors(c)
	e.explainRunners(c)
	return e
}

// explainBackend says where working state lives.
func (e *Explanation) explainBackend(c *config.Config) {
	switch c.StateBackend {
	case config.Hashmap:
		e.WorkingState = "Working state lives on the heap of the hashmap plugin process, in this machine's memory: " +
			"fast, limited by memory, and gone when that process or this machine is."
	case config.LevelDB:
		dir := c.BackendOptions[builtins.LevelDBLocalDir]
		e.WorkingStateDir = dir
		where := "a directory the leveldb plugin creates under the system temp directory (set state.backend.leveldb.localdir to choose one)"
		if dir != "" {
			where = dir
		}
		e.WorkingState = fmt.Sprintf("Working state lives in leveldb files at %s on local disk (an embedded LSM store, so state can "+
			"outgrow memory). They are working files, not a backup: losing this machine loses them.", where)
		e.warnLocalDir(c, dir)
	case builtins.Disaggregated:
		e.WorkingState = disaggregatedState(c.BackendOptions)
	default:
		e.WorkingState = fmt.Sprintf("Working state lives wherever the %s plugin keeps it.", c.StateBackend)
	}
	e.WorkingState += " A state backend alone is not durable: only checkpoints make state survive failures."
	if c.Checkpointing.Incremental && c.StateBackend == config.Hashmap {
		e.Warnings = append(e.Warnings, fmt.Sprintf("%s: %s: true has no effect with hashmap, which always takes full snapshots; leveldb takes incremental ones",
			c.Where(config.KeyIncremental), c.Written(config.KeyIncremental)))
	}
}

// disaggregatedState says where the disaggregated backend's state lives: its table files
// on the remote store, read through a bounded local cache, the live database's journals
// on the local disk.
func disaggregatedState(opts map[string]string) string {
	cache := opts[builtins.DisaggregatedCacheSize]
	if cache == "" {
		cache = "256mb"
	}
	local := opts[builtins.DisaggregatedLocalDir]
	if local == "" {
		local = "a directory under the system temp directory"
	}
	remote := opts[builtins.DisaggregatedRemote]
	caching := fmt.Sprintf("read through a local cache of at most %s in %s, which also holds the live database's journals", cache, local)
	if remote == "" {
		return "Working state's table files live in a directory under the system temp directory on this machine (the default remote; " +
			"set state.backend.disaggregated.remote to an s3:// bucket), " + caching + ": losing this machine loses them."
	}
	if _, isLocal := config.LocalPath(remote); isLocal {
		return fmt.Sprintf("Working state's table files live in %s, %s: they survive losing this machine only if that directory does (a shared file system).", remote, caching)
	}
	return fmt.Sprintf("The object store holds the working state: its table files live in %s, %s. Losing this machine loses only those journals and the cache; "+
		"with checkpoints on remote storage too, a runner anywhere restores the last checkpoint and opens its tables in place, at any parallelism.", remote, caching)
}

// warnLocalDir warns about a leveldb working directory that is remote or on a network file
// system: the seed's "RocksDB writes to S3" and "point RocksDB at network storage".
func (e *Explanation) warnLocalDir(c *config.Config, dir string) {
	if dir == "" {
		return
	}
	key := c.OptionKey(config.LevelDB, builtins.LevelDBLocalDir)
	if _, local := config.LocalPath(dir); !local {
		e.Warnings = append(e.Warnings, fmt.Sprintf("%s: %s is %s, but leveldb works only on local files and never reads or writes remote "+
			"storage; give it a local directory and send checkpoints to remote storage with %s", c.Where(key), key, dir, config.KeyCheckpointDir))
		return
	}
	p, _ := config.LocalPath(dir)
	if m, ok := mountOf(p); ok && networkFS(m.fsType) {
		e.Warnings = append(e.Warnings, fmt.Sprintf("%s: %s %s is on a network file system (%s at %s): the state backend's working files "+
			"need fast local disk, and network storage does not make them durable; checkpoints do that", c.Where(key), key, dir, m.fsType, m.point))
	}
}

// explainStorage says where checkpoints go and whether they survive losing this machine.
func (e *Explanation) explainStorage(c *config.Config) {
	cp := c.Checkpointing
	switch e.CheckpointStorage {
	case config.JMStorage:
		maxSize := int64(builtins.JMStorageDefaultMaxStateSize)
		if v, err := bytesize.Parse(c.StorageOptions[builtins.JMStorageMaxStateSize]); err == nil && v > 0 {
			maxSize = v
		}
		if cp.Dir == "" {
			e.Checkpoints = fmt.Sprintf("Checkpoints are kept in the memory of the jmstorage plugin process (Flink's JobManagerCheckpointStorage), "+
				"at most %s per state chunk.", sizeText(maxSize))
			e.Durable, e.SurvivesMachineLoss = ptr(false), ptr(false)
			e.Warnings = append(e.Warnings, "checkpoints are kept only in memory (jmstorage without a path): they are lost when the "+
				"runner or the jmstorage plugin process exits, and each state chunk is capped at "+sizeText(maxSize)+"; fine for tests, but set "+config.KeyCheckpointDir+" (filesystem storage) for anything else")
		} else {
			desc, survives := e.location(c, cp.Dir)
			e.Checkpoints = fmt.Sprintf("Checkpoint metadata, with all state inlined (at most %s per state chunk), is written to "+
				"%s/<job>/chk-N/_metadata (jmstorage with a path, Flink's JobManagerCheckpointStorage(path)); %s.", sizeText(maxSize), cp.Dir, desc)
			e.Durable, e.SurvivesMachineLoss = ptr(true), ptr(survives)
		}
		if c.StateBackend == config.LevelDB {
			e.Warnings = append(e.Warnings, "leveldb is meant for state larger than memory, but jmstorage caps each state chunk at "+sizeText(maxSize)+": "+
				"checkpoints of large state will fail; use filesystem storage ("+config.KeyCheckpointStorage+": filesystem with "+config.KeyCheckpointDir+")")
		}
	case config.FSStorage:
		desc, survives := e.location(c, cp.Dir)
		e.Checkpoints = fmt.Sprintf("Checkpoints are written by fsstorage (Flink's FileSystemCheckpointStorage) to %s/<job>/chk-N/, "+
			"files shared by incremental checkpoints to %s/<job>/shared/, and state under %s inlined into _metadata; %s.",
			cp.Dir, cp.Dir, sizeText(cp.DataInlineThreshold), desc)
		e.Durable, e.SurvivesMachineLoss = ptr(true), ptr(survives)
	default:
		e.Checkpoints = fmt.Sprintf("Checkpoints are stored by the %s plugin", e.CheckpointStorage)
		if cp.Dir != "" {
			e.Checkpoints += " under " + cp.Dir
		}
		e.Checkpoints += "; whether they survive losing this machine depends on that plugin and where it writes."
		if c.StorageFromBackend {
			e.Checkpoints += fmt.Sprintf(" No checkpoint storage is configured, so the state backend plugin %s, which also implements "+
				"CheckpointStorage, serves as the storage.", e.CheckpointStorage)
		}
	}
}

// location describes where a checkpoint directory is and whether it survives losing this
// machine, adding a warning when it does not.
func (e *Explanation) location(c *config.Config, dir string) (string, bool) {
	p, local := config.LocalPath(dir)
	if !local {
		return "that is remote storage, which survives losing this machine", true
	}
	m, known := mountOf(p)
	switch {
	case known && networkFS(m.fsType):
		return fmt.Sprintf("that is a network file system (%s at %s), which survives losing this machine", m.fsType, m.point), true
	case c.Checkpointing.SharedFilesystem:
		return fmt.Sprintf("%s: true declares it shared storage, which survives losing this machine", c.Written(config.KeySharedFilesystem)), true
	case known && memoryFS(m.fsType):
		e.Warnings = append(e.Warnings, fmt.Sprintf("checkpoint directory %s is on %s (memory, at %s): checkpoints survive a crash of the runner "+
			"but not a reboot or the loss of this machine; use s3:// or a shared file system", dir, m.fsType, m.point))
		return fmt.Sprintf("that is %s (memory) on this machine: checkpoints survive a runner crash, not a reboot", m.fsType), false
	}
	fs := "local disk"
	if known {
		fs = fmt.Sprintf("local disk (%s at %s)", m.fsType, m.point)
	}
	e.Warnings = append(e.Warnings, fmt.Sprintf("checkpoint directory %s is on this machine's %s: checkpoints survive a crash of the runner "+
		"but not the loss of this machine; use s3:// or a shared file system (and set %s: true if it already is one)", dir, fs, config.KeySharedFilesystem))
	return fmt.Sprintf("that is this machine's %s: checkpoints survive a runner crash, but only as long as that disk", fs), false
}

// explainSchedule describes interval, retention, savepoints and restarts.
func (e *Explanation) explainSchedule(c *config.Config) {
	cp := c.Checkpointing
	if cp.Interval > 0 {
		e.Interval = cp.Interval.String()
	} else {
		e.Warnings = append(e.Warnings, config.KeyInterval+" is not set: no periodic checkpoints are taken; a bounded job still takes a final checkpoint, but a failure before it restarts the job from the beginning")
	}
	e.Retention = "The latest completed checkpoint is kept; older ones are deleted (shared files once no kept checkpoint uses them)."
	if cp.NumRetained > 1 {
		e.Retention = fmt.Sprintf("The latest %d completed checkpoints are kept; older ones are deleted (shared files once no kept "+
			"checkpoint uses them).", cp.NumRetained)
	}
	if cp.SavepointDir != "" {
		e.Savepoints = fmt.Sprintf("Savepoints go to %s unless a target is given; they are self-contained and in the canonical format, "+
			"so any state backend can restore them.", cp.SavepointDir)
	} else {
		e.Savepoints = "No default savepoint directory: give a target when taking a savepoint."
	}
	e.OnCancel = onCancelText(cp.Retention)
	e.Restore = restoreText(c.Recovery)
	r := c.Restart
	if e.RestartStrategy == "" {
		e.RestartStrategy = config.DefaultRestartStrategy(cp.Interval)
	}
	e.Restart = restartText(e.RestartStrategy, r)
	if r.StartOverOnCheckpointLoss {
		e.Restart += " If no checkpoint can be restored it starts over from scratch."
	}
	if r.CancellationTimeout > 0 {
		e.Restart += fmt.Sprintf(" A plugin that keeps a failed attempt from ending for %s is killed (task.cancellation.timeout).", r.CancellationTimeout)
	}
}

// onCancelText says what happens to the job's checkpoints when it is cancelled.
func onCancelText(retention string) string {
	const when = "When the job is cancelled (runner stop without --savepoint)"
	if retention == config.RetainOnCancel {
		return when + ", its checkpoints are kept (" + config.RetainOnCancel + "): resume with --from latest, and delete them yourself when done. " +
			"They are kept when a run fails, finishes or is stopped by SIGINT or SIGTERM, too."
	}
	return fmt.Sprintf("%s, the checkpoints it owns are deleted (%s), so --from latest cannot resume it; set %s: %s to keep them. "+
		"They are kept when a run fails, finishes or is stopped by SIGINT or SIGTERM (resume with --from latest).", when, retention, config.KeyRetention, config.RetainOnCancel)
}

// restoreText says what a run starts from and who owns a checkpoint it restores.
func restoreText(r config.Recovery) string {
	var b strings.Builder
	switch r.Path {
	case "":
		b.WriteString("A run starts fresh unless given --from.")
	case "latest":
		b.WriteString("A run without --from resumes from the newest completed checkpoint of the job (" + config.KeyRecoveryPath + ": latest).")
	case "latest-if-any":
		b.WriteString("A run without --from resumes from the newest completed checkpoint of the job, and starts fresh while the job has none (" + config.KeyRecoveryPath + ": latest-if-any).")
	default:
		b.WriteString("A run without --from restores " + r.Path + " (" + config.KeyRecoveryPath + ").")
	}
	switch r.ClaimMode {
	case config.Claim:
		b.WriteString(" A checkpoint restored from a pointer is claimed (CLAIM): the run owns it, and retention may delete it like its own.")
	case config.ClaimLegacy:
		b.WriteString(" A checkpoint restored from a pointer is never deleted, but later checkpoints may reference its files (LEGACY, deprecated).")
	default:
		b.WriteString(" A checkpoint restored from a pointer is not claimed (NO_CLAIM): the run never deletes it, and its first checkpoint is a full one " +
			"that references none of the restored files.")
	}
	b.WriteString(" --from latest resumes the job's own checkpoints, which the run always owns.")
	return b.String()
}

// restartText describes a restart strategy.
func restartText(strategy string, r config.Restart) string {
	const from = " from the latest completed checkpoint"
	switch strategy {
	case config.RestartFixedDelay:
		if r.Attempts == 0 {
			return "On failure the job is not restarted (fixed-delay with 0 attempts)."
		}
		return fmt.Sprintf("fixed-delay: on failure the job restarts%s, %s after it failed; the run allows %d restarts in all.", from, r.Delay, r.Attempts)
	case config.RestartFailureRate:
		f := r.FailureRate
		return fmt.Sprintf("failure-rate: on failure the job restarts%s after %s, unless more than %d failures fall within %s; then it fails.",
			from, f.Delay, f.MaxFailures, f.Interval)
	case config.RestartExponentialDelay:
		x := r.ExponentialDelay
		limit := "with no limit on restarts"
		if x.AttemptsBeforeReset < 1<<31-1 {
			limit = fmt.Sprintf("failing after %d restarts without a reset", x.AttemptsBeforeReset)
		}
		return fmt.Sprintf("exponential-delay: on failure the job restarts%s after %s, then %gx longer after each failure up to %s "+
			"(each wait ±%g%% jitter); the wait starts over at %s once the job ran %s without failing; %s.",
			from, x.InitialBackoff, x.Multiplier, x.MaxBackoff, x.JitterFactor*100, x.InitialBackoff, x.ResetThreshold, limit)
	}
	return "none: on failure the job is not restarted."
}

// overrideTexts prints overrides as given, secrets masked.
func overrideTexts(os []config.Override) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.String()
	}
	return out
}

// sizeText formats a byte count in binary units.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func ptr[T any](v T) *T { return &v }

package config

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/config/flinkkeys"
)

// Current key names.
const (
	KeyStateBackend        = "state.backend.type"
	KeyCheckpointStorage   = "execution.checkpointing.storage"
	KeyCheckpointDir       = "execution.checkpointing.dir"
	KeySavepointDir        = "execution.checkpointing.savepoint-dir"
	KeyInterval            = "execution.checkpointing.interval"
	KeyTimeout             = "execution.checkpointing.timeout"
	KeyNumRetained         = "execution.checkpointing.num-retained"
	KeyTolerableFailed     = "execution.checkpointing.tolerable-failed-checkpoints"
	KeyIncremental         = "execution.checkpointing.incremental"
	KeyDataInlineThreshold = "execution.checkpointing.data-inline-threshold"
	KeyCheckpointingMode   = "execution.checkpointing.mode"
	KeyMinPause            = "execution.checkpointing.min-pause"
	KeyMaxConcurrent       = "execution.checkpointing.max-concurrent-checkpoints"
	KeyRetention           = "execution.checkpointing.externalized-checkpoint-retention"
	KeyRecoveryPath        = "execution.state-recovery.path"
	KeyClaimMode           = "execution.state-recovery.claim-mode"
	KeyIgnoreUnclaimed     = "execution.state-recovery.ignore-unclaimed-state"
	// KeySharedFilesystem is Flowstate's own: true declares that execution.checkpointing.dir
	// is on storage that survives losing this machine (a shared or replicated volume).
	KeySharedFilesystem = "execution.checkpointing.shared-filesystem"
	KeyPluginsDir       = "plugins.dir"
	// KeyChecksumPrefix followed by a plugin name pins that plugin binary's checksum.
	KeyChecksumPrefix      = "plugins.checksums."
	KeyJobName             = "job.name"
	KeyJobType             = "job.type"
	KeyJobParallelism      = "job.parallelism"
	KeyJobMaxParallelism   = "job.max-parallelism"
	KeyJobInput            = "job.input"
	KeyJobOutput           = "job.output"
	KeyJobRate             = "job.rate"
	KeyJobKeys             = "job.keys"
	KeyJobRecords          = "job.records"
	KeyJobBatchSize        = "job.batch-size"
	KeyLeaseTimeout        = "job.lease.timeout" // Flowstate's own (runtime/ownership)
	KeyRestartType         = "restart-strategy.type"
	KeyRestartAttempts     = "restart-strategy.fixed-delay.attempts"
	KeyRestartDelay        = "restart-strategy.fixed-delay.delay"
	KeyFailureRateMax      = "restart-strategy.failure-rate.max-failures-per-interval"
	KeyFailureRateInterval = "restart-strategy.failure-rate.failure-rate-interval"
	KeyFailureRateDelay    = "restart-strategy.failure-rate.delay"
	KeyExpInitialBackoff   = "restart-strategy.exponential-delay.initial-backoff"
	KeyExpMaxBackoff       = "restart-strategy.exponential-delay.max-backoff"
	KeyExpMultiplier       = "restart-strategy.exponential-delay.backoff-multiplier"
	KeyExpResetThreshold   = "restart-strategy.exponential-delay.reset-backoff-threshold"
	KeyExpJitter           = "restart-strategy.exponential-delay.jitter-factor"
	KeyExpAttempts         = "restart-strategy.exponential-delay.attempts-before-reset-backoff"
	KeyStartOverOnLoss     = "execution.recovery.start-over-on-checkpoint-loss"
	KeyCancellationTimeout = "task.cancellation.timeout"
	KeyHeartbeatInterval   = "heartbeat.interval"
	KeyHeartbeatTimeout    = "heartbeat.timeout"
	// KeyAllowOutsideDir names, comma-separated, the plugins whose symlink in the plugin
	// directory may lead out of it.
	KeyAllowOutsideDir = "plugins.allow-outside-dir"
	KeyRestAddress     = "rest.address"
	KeyRestPort        = "rest.port"
	// The control endpoint's security (Flowstate's own; docs/operations.md).
	KeyRestTokenFile     = "rest.token-file"
	KeyRestOpenReads     = "rest.open-reads"
	KeyRestAllowedHosts  = "rest.allowed-hosts"
	KeyRestSSLCert       = "rest.ssl.certificate"
	KeyRestSSLKey        = "rest.ssl.key"
	KeyRestSSLTrust      = "rest.ssl.trust-certificate"
	KeyRestPlaintextRisk = "rest.accept-plaintext-risk"
	// KeyAllowAnySavepointTarget is Flowstate's own: see Control.AllowAnySavepointTarget.
	KeyAllowAnySavepointTarget = "rest.savepoint.allow-any-target"
	// KeyMemoryLimit and KeyMemoryGOGC are Flowstate's own: see Memory.
	KeyMemoryLimit         = "runner.memory.limit"
	KeyMemoryGOGC          = "runner.memory.gogc"
	backendOptionPrefix    = "state.backend."
	storageOptionPrefix    = "execution.checkpointing."
	maxDataInlineThreshold = 1 << 20
	maxMemoryLimit         = 1 << 50
	maxMaxParallelism      = 1 << 15
	// maxConcurrentCheckpoints caps execution.checkpointing.max-concurrent-checkpoints
	// (Flink has no cap; every checkpoint in flight holds a snapshot of each keyed backend).
	maxConcurrentCheckpoints = 64
)

// Values of execution.checkpointing.mode.
const (
	// ModeExactlyOnce aligns barriers: an input whose barrier arrived waits for the others.
	ModeExactlyOnce = "EXACTLY_ONCE"
	// ModeAtLeastOnce does not block inputs while barriers align.
	ModeAtLeastOnce = "AT_LEAST_ONCE"
)

// Values of execution.checkpointing.externalized-checkpoint-retention (Flink's
// ExternalizedCheckpointRetention).
const (
	// RetainOnCancel keeps the job's checkpoints when it is cancelled.
	RetainOnCancel = "RETAIN_ON_CANCELLATION"
	// DeleteOnCancel deletes the job's checkpoints when it is cancelled.
	DeleteOnCancel = "DELETE_ON_CANCELLATION"
	// RetainNever is Flink's default: checkpoints are not retained after the job ends. Here
	// it deletes them on cancellation as DeleteOnCancel does (see Checkpointing.Retention).
	RetainNever = "NO_EXTERNALIZED_CHECKPOINTS"
)

// Values of execution.state-recovery.claim-mode (Flink's RestoreMode).
const (
	// ClaimNo is Flink's default: the run never deletes the restored checkpoint, and its
	// first checkpoint is a full one that references none of the restored files.
	ClaimNo = "NO_CLAIM"
	// Claim: the run owns the restored checkpoint and may delete it like its own.
	Claim = "CLAIM"
	// ClaimLegacy is Flink 1.x's deprecated LEGACY mode: the restored checkpoint is never
	// deleted, but later checkpoints may reference its files.
	ClaimLegacy = "LEGACY"
)

// Restart strategies (restart-strategy.type).
const (
	RestartNone             = "none"
	RestartFixedDelay       = "fixed-delay"
	RestartFailureRate      = "failure-rate"
	RestartExponentialDelay = "exponential-delay"
)

// valueKind says how a key's value parses.
type valueKind int

const (
	kindString valueKind = iota
	kindBackend
	kindStorage
	kindPath
	kindDuration
	kindInt
	kindBool
	kindSize
	kindFloat
	kindRestartType
	// kindEnum is one of values, in any case (Flink reads enums case-insensitively).
	kindEnum
	// kindPointer is "latest", a URI or pointer with a scheme, or a path.
	kindPointer
)

// keyDef describes a current key.
type keyDef struct {
	kind     valueKind
	min, max int64    // inclusive bounds for kindInt (and kindSize when max > 0)
	values   []string // kindEnum: the values, as Flink spells them
}

var currentKeys = map[string]keyDef{
	KeyStateBackend:            {kind: kindBackend},
	KeyCheckpointStorage:       {kind: kindStorage},
	KeyCheckpointDir:           {kind: kindPath},
	KeySavepointDir:            {kind: kindPath},
	KeyInterval:                {kind: kindDuration},
	KeyTimeout:                 {kind: kindDuration},
	KeyNumRetained:             {kind: kindInt, min: 1, max: 1 << 20},
	KeyTolerableFailed:         {kind: kindInt, min: 0, max: 1 << 30},
	KeyIncremental:             {kind: kindBool},
	KeyDataInlineThreshold:     {kind: kindSize, min: 0, max: maxDataInlineThreshold},
	KeyCheckpointingMode:       {kind: kindEnum, values: []string{ModeExactlyOnce, ModeAtLeastOnce}},
	KeyMinPause:                {kind: kindDuration},
	KeyMaxConcurrent:           {kind: kindInt, min: 1, max: maxConcurrentCheckpoints},
	KeyRetention:               {kind: kindEnum, values: []string{DeleteOnCancel, RetainOnCancel, RetainNever}},
	KeyRecoveryPath:            {kind: kindPointer},
	KeyClaimMode:               {kind: kindEnum, values: []string{ClaimNo, Claim, ClaimLegacy}},
	KeyIgnoreUnclaimed:         {kind: kindBool},
	KeySharedFilesystem:        {kind: kindBool},
	KeyPluginsDir:              {kind: kindPath},
	KeyJobName:                 {kind: kindString},
	KeyJobType:                 {kind: kindString},
	KeyJobParallelism:          {kind: kindInt, min: 1, max: maxMaxParallelism},
	KeyJobMaxParallelism:       {kind: kindInt, min: 1, max: maxMaxParallelism},
	KeyJobInput:                {kind: kindPath},
	KeyJobOutput:               {kind: kindPath},
	KeyJobRate:                 {kind: kindFloat},
	KeyJobKeys:                 {kind: kindInt, min: 0, max: 1<<63 - 1},
	KeyJobRecords:              {kind: kindInt, min: 0, max: 1<<63 - 1},
	KeyJobBatchSize:            {kind: kindInt, min: 1, max: 1 << 24},
	KeyLeaseTimeout:            {kind: kindDuration},
	KeyRestartType:             {kind: kindRestartType},
	KeyRestartAttempts:         {kind: kindInt, min: 0, max: 1 << 30},
	KeyRestartDelay:            {kind: kindDuration},
	KeyFailureRateMax:          {kind: kindInt, min: 1, max: 1<<31 - 1},
	KeyFailureRateInterval:     {kind: kindDuration},
	KeyFailureRateDelay:        {kind: kindDuration},
	KeyExpInitialBackoff:       {kind: kindDuration},
	KeyExpMaxBackoff:           {kind: kindDuration},
	KeyExpMultiplier:           {kind: kindFloat},
	KeyExpResetThreshold:       {kind: kindDuration},
	KeyExpJitter:               {kind: kindFloat},
	KeyExpAttempts:             {kind: kindInt, min: 1, max: 1<<31 - 1},
	KeyStartOverOnLoss:         {kind: kindBool},
	KeyCancellationTimeout:     {kind: kindDuration},
	KeyHeartbeatInterval:       {kind: kindDuration},
	KeyHeartbeatTimeout:        {kind: kindDuration},
	KeyAllowOutsideDir:         {kind: kindString},
	KeyRestAddress:             {kind: kindString},
	KeyRestPort:                {kind: kindInt, min: 0, max: 65535},
	KeyRestTokenFile:           {kind: kindPath},
	KeyRestOpenReads:           {kind: kindBool},
	KeyRestAllowedHosts:        {kind: kindString},
	KeyRestSSLCert:             {kind: kindPath},
	KeyRestSSLKey:              {kind: kindPath},
	KeyRestSSLTrust:            {kind: kindPath},
	KeyRestPlaintextRisk:       {kind: kindBool},
	KeyAllowAnySavepointTarget: {kind: kindBool},
	KeyMemoryLimit:             {kind: kindSize, min: 0, max: maxMemoryLimit},
	KeyMemoryGOGC:              {kind: kindString},
}

// deprecatedKeys maps each of Flink's deprecated keys of a supported key to that key; it is
// built from the catalog (runtime/config/flinkkeys).
var deprecatedKeys = map[string]string{}

func init() {
	for _, e := range flinkkeys.All() {
		if e.Status == flinkkeys.Supported {
			for _, d := range e.Deprecated {
				deprecatedKeys[d] = e.Name
			}
		}
	}
}

// Names of the built-in plugins that Flink's keys and values map to, from
// runtime/builtins.
const (
	Hashmap   = builtins.Hashmap
	LevelDB   = builtins.LevelDB
	JMStorage = builtins.JMStorage
	FSStorage = builtins.FSStorage
)

// storageAliases maps Flink's storage names to the plugins that implement them.
var storageAliases = map[string]string{
	"jobmanager": JMStorage,
	"filesystem": FSStorage,
}

// legacyBackend is what a deprecated state.backend value means (the seed's Old -> New table).
type legacyBackend struct {
	backend string
	// storage is the storage the old backend implied: JMStorage, FSStorage, or "auto"
	// (FSStorage when a checkpoint dir is set, else JMStorage).
	storage string
	// flink names the old and new Flink classes.
	flink string
}

const storageAuto = "auto"

var legacyBackendValues = map[string]legacyBackend{
	"jobmanager": {Hashmap, JMStorage, "MemoryStateBackend = HashMapStateBackend + JobManagerCheckpointStorage"},
	"memory":     {Hashmap, JMStorage, "MemoryStateBackend = HashMapStateBackend + JobManagerCheckpointStorage"},
	"filesystem": {Hashmap, FSStorage, "FsStateBackend = HashMapStateBackend + FileSystemCheckpointStorage"},
	"fs":         {Hashmap, FSStorage, "FsStateBackend = HashMapStateBackend + FileSystemCheckpointStorage"},
	"rocksdb": {LevelDB, storageAuto, "RocksDBStateBackend = EmbeddedRocksDBStateBackend (leveldb here) + " +
		"FileSystemCheckpointStorage, or JobManagerCheckpointStorage when no checkpoint dir is set"},
}

var pluginNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// scope says which plugin role an option key belongs to.
type scope int

const (
	scopeNone scope = iota
	scopeBackend
	scopeStorage
)

// keyInfo is what a written key means.
type keyInfo struct {
	// canonical is the current key; for plugin options it is spelled with the plugin's
	// canonical name (state.backend.leveldb.x, execution.checkpointing.fsstorage.x); for
	// keys of the Flink catalog that Flowstate does not read, the catalog's key.
	canonical string
	def       keyDef
	// deprecated is true when the written key is a deprecated spelling.
	deprecated bool
	// alias is true when the written key is a Flink key read as canonical
	// (parallelism.default as job.parallelism).
	alias  bool
	scope  scope  // plugin options only
	plugin string // plugin options and checksums: the canonical plugin name
	option string // plugin options only: the option name
	// flink is the catalog entry of a Flink key Flowstate refuses, or that has no effect
	// here (inert and ignored keys); nil for keys Flowstate reads.
	flink *flinkkeys.Key
}

// namespaces are the plugins whose options a configuration may set: the built-in plugins
// (options of one that is not selected are ignored with a warning) and the plugins the
// file or the command line selects. Any other state.backend.NAME.* or
// execution.checkpointing.NAME.* key is unknown, so that no key is ever taken for the
// option of a plugin that is not configured.
type namespaces struct {
	backends, storages map[string]bool
}

// newNamespaces returns the namespaces of the built-in plugins, by the kinds
// runtime/builtins gives them.
func newNamespaces() *namespaces {
	n := &namespaces{backends: map[string]bool{}, storages: map[string]bool{}}
	for _, p := range builtins.All() {
		n.backends[p.Name] = slices.Contains(p.Kinds, builtins.KindStateBackend)
		n.storages[p.Name] = slices.Contains(p.Kinds, builtins.KindCheckpointStorage)
	}
	return n
}

// addBackend allows the options of a selected state backend; a plugin serving both roles
// takes storage options too.
func (n *namespaces) addBackend(name string) { n.backends[name], n.storages[name] = true, true }

// addStorage allows the options of a selected checkpoint storage.
func (n *namespaces) addStorage(name string) { n.storages[name] = true }

// pluginOption splits a plugin option key into its scope, canonical plugin name and option;
// ok is false when key is not shaped as one.
func pluginOption(key string) (sc scope, plugin, option string, ok bool) {
	if rest, found := strings.CutPrefix(key, backendOptionPrefix); found {
		name, opt, found := strings.Cut(rest, ".")
		if found && opt != "" && pluginNameRE.MatchString(name) && name != "type" && name != "incremental" {
			return scopeBackend, name, opt, true
		}
	}
	if rest, found := strings.CutPrefix(key, storageOptionPrefix); found {
		name, opt, found := strings.Cut(rest, ".")
		if _, reserved := currentKeys[storageOptionPrefix+name]; found && opt != "" && !reserved && pluginNameRE.MatchString(name) {
			if alias, ok := storageAliases[name]; ok {
				name = alias
			}
			return scopeStorage, name, opt, true
		}
	}
	return scopeNone, "", "", false
}

// classify says what a written key means; ok is false for an unknown key. Plugin options
// are recognised only in ns (nil: any plugin).
func classify(key string, ns *namespaces) (keyInfo, bool) {
	if def, ok := currentKeys[key]; ok {
		return keyInfo{canonical: key, def: def}, true
	}
	if repl, ok := deprecatedKeys[key]; ok {
		return keyInfo{canonical: repl, def: currentKeys[repl], deprecated: true}, true
	}
	if name, ok := strings.CutPrefix(key, KeyChecksumPrefix); ok && pluginNameRE.MatchString(name) {
		return keyInfo{canonical: key, def: keyDef{kind: kindString}, plugin: name}, true
	}
	if e, deprecated, ok := flinkkeys.Lookup(key); ok {
		if e.Status != flinkkeys.Alias {
			return keyInfo{canonical: e.Name, flink: &e, deprecated: deprecated}, true
		}
		if def, ok := currentKeys[e.Target]; ok {
			return keyInfo{canonical: e.Target, def: def, alias: true, deprecated: deprecated}, true
		}
		sc, plugin, opt, _ := pluginOption(e.Target)
		return keyInfo{canonical: e.Target, scope: sc, plugin: plugin, option: opt, alias: true, deprecated: deprecated}, true
	}
	if sc, plugin, opt, ok := pluginOption(key); ok && ns.allows(sc, plugin) {
		prefix := backendOptionPrefix
		if sc == scopeStorage {
			prefix = storageOptionPrefix
		}
		return keyInfo{canonical: prefix + plugin + "." + opt, scope: sc, plugin: plugin, option: opt}, true
	}
	return keyInfo{}, false
}

// allows reports whether options of plugin may be set in scope sc.
func (n *namespaces) allows(sc scope, plugin string) bool {
	switch {
	case n == nil:
		return true
	case sc == scopeBackend:
		return n.backends[plugin]
	}
	return n.storages[plugin]
}

// removedKeys are Flowstate's keys that earlier versions read, with what replaces each.
var removedKeys = map[string]string{
	"runner.memory.gc-headroom": "removed with the heap ballast it sized; the runner now sets Go's own knobs: " +
		KeyMemoryLimit + " (the soft memory limit) and " + KeyMemoryGOGC,
}

// unknownKeyError says why key is unknown, suggesting the closest known key. A key shaped
// as the option of a plugin that is not configured says so.
func unknownKeyError(key string, ns *namespaces, backend, storage string) error {
	what := ErrUnknownKey
	if why, ok := removedKeys[key]; ok {
		return fmt.Errorf("%w: %s", what, why)
	}
	if strings.HasPrefix(key, backendOptionPrefix+"rocksdb.") {
		what = fmt.Errorf("%w: not one of Flink's RocksDB options", ErrUnknownKey)
	}
	var why string
	if sc, plugin, _, ok := pluginOption(key); ok && !ns.allows(sc, plugin) && plugin != "rocksdb" {
		role, selected := "state backend", backend
		if sc == scopeStorage {
			role, selected = "checkpoint storage", storage
		}
		if selected == "" {
			selected = "the default"
		}
		why = fmt.Sprintf("neither a key Flowstate knows nor an option of the configured %s (%s): %q is not selected, so its options are not read", role, selected, plugin)
	}
	switch s := suggest(key); {
	case s != "" && why != "":
		return fmt.Errorf("%w: did you mean %s? (%s)", what, s, why)
	case s != "":
		return fmt.Errorf("%w: did you mean %s?", what, s)
	case why != "":
		return fmt.Errorf("%w: %s", what, why)
	}
	return what
}

// suggest returns the known key closest to an unknown one, or "" when none is close.
func suggest(key string) string {
	catalog := flinkkeys.All()
	candidates := make([]string, 0, len(currentKeys)+len(deprecatedKeys)+len(catalog))
	for k := range currentKeys {
		candidates = append(candidates, k)
	}
	for k := range deprecatedKeys {
		candidates = append(candidates, k)
	}
	for _, e := range catalog {
		if e.Status != flinkkeys.Supported && !e.Namespace() {
			candidates = append(candidates, e.Name)
		}
	}
	sort.Strings(candidates)
	best, bestDist := "", len(key)/3+2
	for _, k := range candidates {
		if d := editDistance(key, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		if repl, ok := deprecatedKeys[best]; ok {
			return repl
		}
		return best
	}
	// A key written without its prefix, such as "checkpointing.interval" or "interval".
	for _, k := range candidates {
		if _, current := currentKeys[k]; current && strings.HasSuffix(k, "."+key) {
			return k
		}
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

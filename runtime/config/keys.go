package config

import (
	"regexp"
	"sort"
	"strings"
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
	KeyLeaseTimeout        = "job.lease.timeout" // Flowstate's own (runtime/lease)
	KeyRestartType         = "restart-strategy.type"
	KeyRestartAttempts     = "restart-strategy.fixed-delay.attempts"
	KeyRestartDelay        = "restart-strategy.fixed-delay.delay"
	KeyStartOverOnLoss     = "execution.recovery.start-over-on-checkpoint-loss"
	KeyCancellationTimeout = "task.cancellation.timeout"
	KeyRestAddress         = "rest.address"
	KeyRestPort            = "rest.port"
	backendOptionPrefix    = "state.backend."
	storageOptionPrefix    = "execution.checkpointing."
	legacyRocksDBPrefix    = "state.backend.rocksdb."
	maxDataInlineThreshold = 1 << 20
	maxMaxParallelism      = 1 << 15
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
)

// keyDef describes a current key.
type keyDef struct {
	kind     valueKind
	min, max int64 // inclusive bounds for kindInt (and kindSize when max > 0)
}

var currentKeys = map[string]keyDef{
	KeyStateBackend:        {kind: kindBackend},
	KeyCheckpointStorage:   {kind: kindStorage},
	KeyCheckpointDir:       {kind: kindPath},
	KeySavepointDir:        {kind: kindPath},
	KeyInterval:            {kind: kindDuration},
	KeyTimeout:             {kind: kindDuration},
	KeyNumRetained:         {kind: kindInt, min: 1, max: 1 << 20},
	KeyTolerableFailed:     {kind: kindInt, min: 0, max: 1 << 30},
	KeyIncremental:         {kind: kindBool},
	KeyDataInlineThreshold: {kind: kindSize, min: 0, max: maxDataInlineThreshold},
	KeySharedFilesystem:    {kind: kindBool},
	KeyPluginsDir:          {kind: kindPath},
	KeyJobName:             {kind: kindString},
	KeyJobType:             {kind: kindString},
	KeyJobParallelism:      {kind: kindInt, min: 1, max: maxMaxParallelism},
	KeyJobMaxParallelism:   {kind: kindInt, min: 1, max: maxMaxParallelism},
	KeyJobInput:            {kind: kindPath},
	KeyJobOutput:           {kind: kindPath},
	KeyJobRate:             {kind: kindFloat},
	KeyJobKeys:             {kind: kindInt, min: 0, max: 1<<63 - 1},
	KeyJobRecords:          {kind: kindInt, min: 0, max: 1<<63 - 1},
	KeyJobBatchSize:        {kind: kindInt, min: 1, max: 1 << 24},
	KeyLeaseTimeout:        {kind: kindDuration},
	KeyRestartType:         {kind: kindRestartType},
	KeyRestartAttempts:     {kind: kindInt, min: 0, max: 1 << 30},
	KeyRestartDelay:        {kind: kindDuration},
	KeyStartOverOnLoss:     {kind: kindBool},
	KeyCancellationTimeout: {kind: kindDuration},
	KeyRestAddress:         {kind: kindString},
	KeyRestPort:            {kind: kindInt, min: 0, max: 65535},
}

// deprecatedKeys maps each deprecated key to its replacement (Flink's deprecated keys).
var deprecatedKeys = map[string]string{
	"state.backend":                     KeyStateBackend,
	"state.checkpoint-storage":          KeyCheckpointStorage,
	"state.checkpoints.dir":             KeyCheckpointDir,
	"state.savepoints.dir":              KeySavepointDir,
	"state.checkpoints.num-retained":    KeyNumRetained,
	"state.backend.incremental":         KeyIncremental,
	"state.storage.fs.memory-threshold": KeyDataInlineThreshold,
	"restart-strategy":                  KeyRestartType,
}

// Built-in plugin names.
const (
	Hashmap   = "hashmap"
	LevelDB   = "leveldb"
	JMStorage = "jmstorage"
	FSStorage = "fsstorage"
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
	// canonical name (state.backend.leveldb.x, execution.checkpointing.fsstorage.x).
	canonical string
	def       keyDef
	// deprecated is true when the written key is a deprecated spelling.
	deprecated bool
	scope      scope  // plugin options only
	plugin     string // plugin options and checksums: the canonical plugin name
	option     string // plugin options only: the option name
}

// classify says what a written key means; ok is false for an unknown key.
func classify(key string) (keyInfo, bool) {
	if def, ok := currentKeys[key]; ok {
		return keyInfo{canonical: key, def: def}, true
	}
	if repl, ok := deprecatedKeys[key]; ok {
		return keyInfo{canonical: repl, def: currentKeys[repl], deprecated: true}, true
	}
	if name, ok := strings.CutPrefix(key, KeyChecksumPrefix); ok && pluginNameRE.MatchString(name) {
		return keyInfo{canonical: key, def: keyDef{kind: kindString}, plugin: name}, true
	}
	if rest, ok := strings.CutPrefix(key, backendOptionPrefix); ok {
		name, opt, found := strings.Cut(rest, ".")
		if found && opt != "" && pluginNameRE.MatchString(name) && name != "type" && name != "incremental" {
			info := keyInfo{scope: scopeBackend, plugin: name, option: opt}
			if name == "rocksdb" {
				info.plugin, info.deprecated = LevelDB, true
			}
			info.canonical = backendOptionPrefix + info.plugin + "." + opt
			return info, true
		}
	}
	if rest, ok := strings.CutPrefix(key, storageOptionPrefix); ok {
		name, opt, found := strings.Cut(rest, ".")
		if _, reserved := currentKeys[storageOptionPrefix+name]; found && opt != "" && !reserved && pluginNameRE.MatchString(name) {
			if alias, ok := storageAliases[name]; ok {
				name = alias
			}
			return keyInfo{canonical: storageOptionPrefix + name + "." + opt, scope: scopeStorage, plugin: name, option: opt}, true
		}
	}
	return keyInfo{}, false
}

// suggest returns the known key closest to an unknown one, or "" when none is close.
func suggest(key string) string {
	candidates := make([]string, 0, len(currentKeys)+len(deprecatedKeys))
	for k := range currentKeys {
		candidates = append(candidates, k)
	}
	for k := range deprecatedKeys {
		candidates = append(candidates, k)
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

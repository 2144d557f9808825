// Package builtins names Flowstate's built-in plugins (hashmap, leveldb, disaggregated,
// jmstorage and fsstorage) without linking them: their names, the kinds each implements, the option keys
// each accepts, and the options and defaults the runner's configuration refers to by name
// (Flink's keys are read as some of them). The configuration takes what it knows of the
// built-ins from here, so that the runner binary, which runs every plugin out of process,
// links no plugin code.
//
// It owns these facts as plain constants and tables; plugins/builtin, the registry that
// links the plugins for whatever runs them in its own process, tests them against what
// each plugin says of itself.
//
// Dependency rule: this package is a leaf. It imports nothing at all, not even the
// standard library, the SDK or a plugin.
package builtins

// Names of the built-in plugins.
const (
	Hashmap = "hashmap"
	LevelDB = "leveldb"
	// Disaggregated is the state backend whose table files live on a remote store.
	Disaggregated = "disaggregated"
	JMStorage     = "jmstorage"
	FSStorage     = "fsstorage"
)

// Kinds of plugin, spelled as the SDK's sdk.Kind values.
const (
	// KindStateBackend is sdk.KindStateBackend.
	KindStateBackend = "state-backend"
	// KindCheckpointStorage is sdk.KindCheckpointStorage.
	KindCheckpointStorage = "checkpoint-storage"
)

// Options of the built-ins that the runner's configuration names (Flink's keys are read as
// them).
const (
	LevelDBLocalDir          = "localdir"
	LevelDBBlockCacheSize    = "block-cache-size"
	LevelDBWriteBufferSize   = "write-buffer-size"
	JMStorageMaxStateSize    = "max-state-size"
	FSStorageWriteBufferSize = "write-buffer-size"
	FSStorageS3Endpoint      = "s3.endpoint"
	FSStorageS3AccessKey     = "s3.access-key"
	FSStorageS3SecretKey     = "s3.secret-key"
	FSStorageS3PathStyle     = "s3.path-style"
	DisaggregatedRemote      = "remote"
	DisaggregatedLocalDir    = "localdir"
	DisaggregatedCacheSize   = "cache-size"
)

// JMStorageDefaultMaxStateSize is jmstorage's default max-state-size (5 MiB, Flink's
// JobManagerCheckpointStorage default).
const JMStorageDefaultMaxStateSize = 5 << 20

// Plugin is what the runner knows of one built-in plugin without running it.
type Plugin struct {
	// Name is the plugin's name, as its PluginInfo returns it.
	Name string
	// Kinds are the kinds it implements (KindStateBackend, KindCheckpointStorage), state
	// backend first, as the SDK's host.KindsOf reports them.
	Kinds []string
	// Options are the option keys its Configure accepts.
	Options []string
}

// s3Options are the S3 client's options, which fsstorage (checkpoints on S3) and
// disaggregated (an s3:// remote store) both accept, as the code they share reads them.
var s3Options = []string{FSStorageS3Endpoint, "s3.region", FSStorageS3AccessKey, FSStorageS3SecretKey, FSStorageS3PathStyle, "s3.part-size"}

// table holds the built-ins, sorted by name.
var table = []Plugin{
	{Name: Disaggregated, Kinds: []string{KindStateBackend},
		Options: append([]string{DisaggregatedRemote, DisaggregatedLocalDir, DisaggregatedCacheSize, LevelDBBlockCacheSize, LevelDBWriteBufferSize}, s3Options...)},
	{Name: FSStorage, Kinds: []string{KindCheckpointStorage},
		Options: append([]string{"dir", "savepoint-dir", "data-inline-threshold", FSStorageWriteBufferSize}, s3Options...)},
	{Name: Hashmap, Kinds: []string{KindStateBackend}, Options: []string{"incremental"}},
	{Name: JMStorage, Kinds: []string{KindCheckpointStorage},
		Options: []string{"dir", "savepoint-dir", "data-inline-threshold", JMStorageMaxStateSize}},
	{Name: LevelDB, Kinds: []string{KindStateBackend},
		Options: []string{LevelDBLocalDir, LevelDBBlockCacheSize, LevelDBWriteBufferSize, "memory-limit", "incremental"}},
}

// All returns every built-in plugin, sorted by name; the caller owns the result.
func All() []Plugin {
	out := make([]Plugin, len(table))
	for i, p := range table {
		out[i] = clone(p)
	}
	return out
}

// Lookup returns the built-in plugin by that name, and false when there is none.
func Lookup(name string) (Plugin, bool) {
	for _, p := range table {
		if p.Name == name {
			return clone(p), true
		}
	}
	return Plugin{}, false
}

// clone returns p with slices of its own.
func clone(p Plugin) Plugin {
	p.Kinds = append([]string(nil), p.Kinds...)
	p.Options = append([]string(nil), p.Options...)
	return p
}

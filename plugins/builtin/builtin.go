// Package builtin is the registry of Flowstate's built-in plugins: hashmap, leveldb,
// jmstorage and fsstorage. It is the one place that names their packages. The runner's
// configuration asks it for the built-ins' names, kinds and options, and whatever runs the
// built-ins in its own process (the benchmark, the custom job example, tests) takes their
// constructors from it.
//
// Dependency rule: runtime may import this package, never a plugin package; the plugins
// import neither runtime nor this package.
package builtin

import (
	"slices"
	"sort"

	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/plugins/jmstorage/jmstorage"
	"github.com/flowstate/flowstate/plugins/leveldb/leveldb"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// Names of the built-in plugins, as their packages declare them.
const (
	Hashmap   = hashmap.Name
	LevelDB   = leveldb.Name
	JMStorage = jmstorage.Name
	FSStorage = fsstorage.Name
)

// Options of the built-ins that the runner's configuration names (Flink's keys are read as
// them), as the plugins declare them.
const (
	LevelDBLocalDir          = leveldb.OptionLocalDir
	LevelDBBlockCacheSize    = leveldb.OptionBlockCacheSize
	LevelDBWriteBufferSize   = leveldb.OptionWriteBufferSize
	JMStorageMaxStateSize    = jmstorage.OptionMaxStateSize
	FSStorageWriteBufferSize = fsstorage.OptionWriteBufferSize
	FSStorageS3Endpoint      = fsstorage.OptionS3Endpoint
	FSStorageS3AccessKey     = fsstorage.OptionS3AccessKey
	FSStorageS3SecretKey     = fsstorage.OptionS3SecretKey
	FSStorageS3PathStyle     = fsstorage.OptionS3PathStyle
)

// JMStorageDefaultMaxStateSize is jmstorage's default max-state-size.
const JMStorageDefaultMaxStateSize = jmstorage.DefaultMaxStateSize

// Plugin describes one built-in plugin.
type Plugin struct {
	// Info is what the plugin's PluginInfo returns.
	Info sdk.PluginInfo
	// Kinds are the kinds it implements (host.KindsOf), state backend first.
	Kinds []sdk.Kind
	// Options are the option keys its Configure accepts.
	Options []string
	// New returns a fresh, unconfigured instance.
	New func() sdk.Plugin
}

// plugins is the table, by name; each entry asks its plugin for its name and kinds.
var plugins = table(
	entry{func() sdk.Plugin { return hashmap.New() }, hashmap.OptionKeys()},
	entry{func() sdk.Plugin { return leveldb.New() }, leveldb.OptionKeys()},
	entry{func() sdk.Plugin { return jmstorage.New() }, jmstorage.OptionKeys()},
	entry{func() sdk.Plugin { return fsstorage.New() }, fsstorage.OptionKeys()},
)

type entry struct {
	new     func() sdk.Plugin
	options []string
}

func table(entries ...entry) map[string]Plugin {
	out := make(map[string]Plugin, len(entries))
	for _, e := range entries {
		p := e.new()
		info := p.PluginInfo()
		out[info.Name] = Plugin{Info: info, Kinds: host.KindsOf(p), Options: e.options, New: e.new}
	}
	return out
}

// Lookup returns the built-in plugin name, and false when there is none by that name.
func Lookup(name string) (Plugin, bool) {
	p, ok := plugins[name]
	if ok {
		p.Kinds, p.Options = slices.Clone(p.Kinds), slices.Clone(p.Options)
	}
	return p, ok
}

// Names returns the built-ins' names, sorted.
func Names() []string {
	names := make([]string, 0, len(plugins))
	for n := range plugins {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Constructors returns a new map of every built-in's constructor by name, what
// pluginhost.Options.Builtins and runtime.Environment.UseInProcess take.
func Constructors() map[string]func() sdk.Plugin {
	out := make(map[string]func() sdk.Plugin, len(plugins))
	for n, p := range plugins {
		out[n] = p.New
	}
	return out
}

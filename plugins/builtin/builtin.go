// Package builtin is the registry of Flowstate's built-in plugins: hashmap, leveldb,
// disaggregated, jmstorage and fsstorage. It owns their constructors, for whatever runs the built-ins in
// its own process (the benchmark, the custom job example, tests), and is the one place that
// names their packages. What the runner needs to know of the built-ins without linking them
// (names, kinds, options) is in runtime/builtins, which this package's tests hold against
// the plugins themselves.
//
// Dependency rule: the runner binary (cmd/runner) and runtime/config never import this
// package, since it links every plugin's code; the plugins import neither the runtime nor
// this package. Of the runtime it imports only the leaf runtime/builtins.
package builtin

import (
	"maps"

	"github.com/flowstate/flowstate/plugins/disaggregated/disaggregated"
	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/plugins/jmstorage/jmstorage"
	"github.com/flowstate/flowstate/plugins/leveldb/leveldb"
	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/sdk"
)

// constructors are the built-ins' constructors, by the names runtime/builtins gives them.
var constructors = map[string]func() sdk.Plugin{
	builtins.Hashmap:       func() sdk.Plugin { return hashmap.New() },
	builtins.LevelDB:       func() sdk.Plugin { return leveldb.New() },
	builtins.Disaggregated: func() sdk.Plugin { return disaggregated.New() },
	builtins.JMStorage:     func() sdk.Plugin { return jmstorage.New() },
	builtins.FSStorage:     func() sdk.Plugin { return fsstorage.New() },
}

// Constructors returns a new map of every built-in's constructor by name, what
// pluginhost.Options.Builtins and runner.Environment.UseInProcess take. Each constructor
// returns a fresh, unconfigured instance.
func Constructors() map[string]func() sdk.Plugin { return maps.Clone(constructors) }

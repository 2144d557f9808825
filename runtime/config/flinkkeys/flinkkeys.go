package flinkkeys

import (
	"slices"
	"sort"
	"strings"
)

// Status is what Flowstate does with a Flink key.
type Status int

const (
	// Supported: Flowstate implements the key with Flink's meaning; runtime/config parses
	// it. The entry's Deprecated spellings are Flink's deprecated keys for it.
	Supported Status = iota
	// Alias: the key is read as Target, a Flowstate key or plugin option.
	Alias
	// Refused: a feature Flowstate does not implement. Only Flink's default (or a value in
	// Also) loads, with a note; any other value is refused by name.
	Refused
	// Inert: a setting that matters only when the feature of Target is on, which Flowstate
	// refuses: it loads with a note saying it has no effect.
	Inert
	// Ignored: concerns a Flink cluster (JobManager, TaskManagers, web UI, high
	// availability, metrics, ...) or a tuning Flowstate has no equivalent of: it loads and
	// is listed as ignored.
	Ignored
)

// Kind is the type of a Flink option's value, as its ConfigOption declares it: it says how
// a value of a refused key compares with Flink's default.
type Kind int

const (
	// KindString compares values as written.
	KindString Kind = iota
	// KindBool is true or false, in any case.
	KindBool
	// KindInt is a decimal integer.
	KindInt
	// KindSize is a memory size as Flink writes it ("64mb").
	KindSize
	// KindDuration is a duration as Flink writes it ("10 min"; a bare number is ms).
	KindDuration
	// KindFloat is a number.
	KindFloat
	// KindEnum is one of an enum's names, in any case (Flink reads enums
	// case-insensitively).
	KindEnum
)

// Key is one Flink key, or a namespace of keys (see Namespace).
type Key struct {
	// Name is the key as Flink spells it; a namespace ends in "." or "-".
	Name   string
	Status Status
	// Target: for aliases the key it is read as; for inert keys the key of the feature
	// they depend on.
	Target string
	// Default is Flink's default as Flink writes it; Kind says how values compare with it.
	Default string
	Kind    Kind
	// Also are other values that load with a note (refused keys only).
	Also []string
	// What names the feature (refused keys) or says why the key is ignored.
	What string
	// Backend, when set, limits the key to that state backend: with another backend it is
	// ignored with a warning, as Flink ignores the RocksDB keys of a hashmap job.
	Backend string
	// Deprecated are Flink's deprecated spellings of the key.
	Deprecated []string
	// group is the section of docs/configuration.md's table of Flink keys.
	group string
}

// Namespace reports whether the entry stands for every key that starts with its Name: one
// ending in "." (or "-", as in execution.batch-shuffle-mode).
func (k Key) Namespace() bool {
	return strings.HasSuffix(k.Name, ".") || strings.HasSuffix(k.Name, "-")
}

// clone returns k with slices of its own, so that no caller can change the catalog.
func (k Key) clone() Key {
	k.Also, k.Deprecated = slices.Clone(k.Also), slices.Clone(k.Deprecated)
	return k
}

// All returns the catalog, every key and namespace, in the order of docs/configuration.md.
func All() []Key {
	out := make([]Key, len(table))
	for i, k := range table {
		out[i] = k.clone()
	}
	return out
}

// The catalog indexed: exact keys and Flink's deprecated spellings, and the namespaces,
// longest first so that the most specific one wins. Supported keys are not indexed:
// runtime/config reads them.
var (
	exact      = map[string]*Key{}
	deprecated = map[string]*Key{}
	prefixes   []*Key
)

func init() {
	for i := range table {
		k := &table[i]
		if k.Status == Supported {
			continue
		}
		if k.Namespace() {
			prefixes = append(prefixes, k)
			continue
		}
		exact[k.Name] = k
		for _, d := range k.Deprecated {
			deprecated[d] = k
		}
	}
	sort.SliceStable(prefixes, func(i, j int) bool { return len(prefixes[i].Name) > len(prefixes[j].Name) })
}

// Lookup finds the entry of a key Flowstate does not read itself (any status but
// Supported): an exact key, one of Flink's deprecated spellings (isDeprecated is then
// true), or a key in a namespace.
func Lookup(key string) (k Key, isDeprecated bool, ok bool) {
	if k, ok := exact[key]; ok {
		return k.clone(), false, true
	}
	if k, ok := deprecated[key]; ok {
		return k.clone(), true, true
	}
	for _, k := range prefixes {
		if strings.HasPrefix(key, k.Name) {
			return k.clone(), false, true
		}
	}
	return Key{}, false, false
}

// AliasOf returns the Flink key that is read as target (an alias), and false when none
// is.
func AliasOf(target string) (string, bool) {
	for _, k := range table {
		if k.Status == Alias && k.Target == target {
			return k.Name, true
		}
	}
	return "", false
}

// FeatureOf names the feature a key of the catalog turns on, for notes about the keys
// that depend on it (the Target of an inert key).
func FeatureOf(key string) string {
	if key == stateBackendType {
		return stateBackendType + ": " + ForSt
	}
	if k, ok := exact[key]; ok && k.What != "" {
		return k.What + " (" + key + ")"
	}
	return key
}

// RefusedBackend returns why a value of state.backend.type (lower case) that names a Flink
// state backend Flowstate does not implement is refused, and false for any other value.
func RefusedBackend(name string) (reason string, ok bool) {
	reason, ok = refusedBackends[name]
	return reason, ok
}

// BackendAlias returns the built-in state backend another name (lower case) stands for:
// Flink's "rocksdb" is leveldb, and Flink's factory classes name their backends; false
// when name is no such alias.
func BackendAlias(name string) (builtin string, ok bool) {
	builtin, ok = backendAliases[name]
	return builtin, ok
}

// Package state is the typed keyed state of an operator subtask over a keyed state backend
// of the SDK: the kinds of state (Value, Reducing, List, Map) with their Codecs, the Store
// that reads and writes them in micro-batches with a cache between batches, and where state
// lives in a backend: key groups (KeyGroupFor, KeyGroupRangeFor) and the layout of state
// keys (AppendStateKey, SplitStateKey), which the offline tools read back.
//
// It sits below the engine, which drives it: it imports only the SDK (sdk, and sdk/host for
// a keyed backend's pipelined writes), and must never import anything else of the runtime
// (not the engine, runtime/dataflow, nor checkpoint, the configuration or the runner) nor a
// plugin.
package state

package leveldb

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/flowstate/flowstate/sdk"
)

// FormatIncremental is the format of the handles of incremental checkpoints
// (incremental=true).
//
// goleveldb offers no consistent cut of its table files (no memtable flush, no checkpoint
// API), so incremental checkpoints are built from immutable files the backend writes
// itself, like Flink's changelog-based incremental checkpoints: a base holding the whole
// state, then one delta per checkpoint holding the keys written since the previous
// completed checkpoint.
//
// A handle of this format has KeyGroups, the key groups of the keyed backend that wrote
// it, and Files, in order:
//
//	"base"     a canonical stream (package sdk/kvstream): every pair of the state when the
//	           base was written
//	"delta-1"  the changes since the checkpoint of the base
//	...
//	"delta-N"  the changes since the checkpoint of delta-(N-1)
//
// A delta is a kvstream whose keys are the state keys written since the previous
// completed checkpoint, in ascending order, and whose values start with an operation
// byte: 'P' followed by the key's value at the checkpoint (a put), or 'D' alone (the key
// was deleted). Every file is written once, in sdk.ScopeShared, and referenced by its
// existing handle by every later checkpoint of the chain; only the newest file of a handle
// was uploaded by its checkpoint. Restoring applies the base, then the deltas in order,
// keeping the keys of the restoring backend's key groups.
//
// Meta is a small JSON object, for people reading checkpoint metadata:
// {"checkpoint": id of the checkpoint, "base_checkpoint": id of the checkpoint that wrote
// the base, "keys": the number of keys of the newest file}.
//
// A new base is written when the backend has no completed checkpoint to build on (the
// first checkpoint, after a restore into another key group range, after a checkpoint it
// did not write completed), when the keys changed since outgrow the memory the backend tracks them in
// (trackedBudget), when the chain has
// maxDeltas deltas, or when its deltas together outgrow its base. Savepoints are never
// incremental: they are canonical streams in sdk.ScopeExclusive.
const FormatIncremental = "leveldb-incremental-v1"

// File names of an incremental handle.
const (
	baseFile    = "base"
	deltaPrefix = "delta-"
)

// Operation bytes that start the values of a delta.
const (
	opPut    = 'P'
	opDelete = 'D'
)

// maxDeltas is the longest chain of deltas after a base: restoring reads them all.
const maxDeltas = 16

// chain is the files of one incremental checkpoint of a keyed backend.
type chain struct {
	baseID int64 // checkpoint that wrote the base
	base   sdk.NamedStateHandle
	deltas []sdk.NamedStateHandle
}

// deltaBytes returns the size of the deltas.
func (c *chain) deltaBytes() int64 {
	var n int64
	for _, d := range c.deltas {
		n += d.Handle.Size
	}
	return n
}

// extendable reports whether a delta may be added to c.
func (c *chain) extendable() bool {
	return len(c.deltas) < maxDeltas && c.deltaBytes() < c.base.Handle.Size
}

// files returns the files of c, base first.
func (c *chain) files() []sdk.NamedStateHandle {
	return append([]sdk.NamedStateHandle{c.base}, c.deltas...)
}

// withDelta returns c followed by delta h.
func (c *chain) withDelta(h sdk.StreamStateHandle) *chain {
	name := deltaPrefix + strconv.Itoa(len(c.deltas)+1)
	return &chain{baseID: c.baseID, base: c.base, deltas: append(append([]sdk.NamedStateHandle(nil), c.deltas...), sdk.NamedStateHandle{Name: name, Handle: h})}
}

// handleMeta is the Meta of an incremental handle.
type handleMeta struct {
	Checkpoint     int64 `json:"checkpoint"`
	BaseCheckpoint int64 `json:"base_checkpoint"`
	Keys           int64 `json:"keys"`
}

// handle returns the keyed state handle of checkpoint id for chain c over key groups r;
// keys is the number of keys of its newest file.
func (c *chain) handle(r sdk.KeyGroupRange, id int64, keys int64) sdk.KeyedStateHandle {
	meta, _ := json.Marshal(handleMeta{Checkpoint: id, BaseCheckpoint: c.baseID, Keys: keys}) // cannot fail
	return sdk.KeyedStateHandle{KeyGroups: r, Format: FormatIncremental, Files: c.files(), Meta: meta}
}

// parseChain checks the files of an incremental handle (base, then delta-1..delta-N) and
// returns its chain.
func parseChain(h sdk.KeyedStateHandle) (*chain, error) {
	if len(h.Files) == 0 || h.Files[0].Name != baseFile {
		return nil, fmt.Errorf("%s handle of key groups %s: first file is not %q: %w", FormatIncremental, h.KeyGroups, baseFile, sdk.ErrCorrupt)
	}
	c := &chain{base: h.Files[0]}
	for i, f := range h.Files[1:] {
		if want := deltaPrefix + strconv.Itoa(i+1); f.Name != want {
			return nil, fmt.Errorf("%s handle of key groups %s: file %d is %q, want %q: %w", FormatIncremental, h.KeyGroups, i+1, f.Name, want, sdk.ErrCorrupt)
		}
		c.deltas = append(c.deltas, f)
	}
	var m handleMeta
	if len(h.Meta) > 0 && json.Unmarshal(h.Meta, &m) == nil {
		c.baseID = m.BaseCheckpoint
	}
	return c, nil
}

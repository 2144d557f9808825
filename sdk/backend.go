package sdk

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
)

// StateBackend keeps a job's working state while the job runs. It creates one
// KeyedStateBackend per stateful operator subtask. A state backend is not durable by itself:
// durability comes from snapshots written to a CheckpointStorage.
type StateBackend interface {
	Plugin
	// CreateKeyedStateBackend creates an empty keyed backend for one operator subtask.
	// Several keyed backends of one StateBackend live at the same time and are used
	// concurrently. An empty KeyGroups range, or one starting below 0, is an error wrapping
	// ErrInvalidArgument.
	CreateKeyedStateBackend(ctx context.Context, params KeyedBackendParams) (KeyedStateBackend, error)
}

// KeyedBackendParams identify the operator subtask a keyed backend serves.
type KeyedBackendParams struct {
	// JobID names the job, for example "wordcount".
	JobID string
	// OperatorID names the operator within the job, for example "count".
	OperatorID string
	// Subtask is the subtask's index, 0 <= Subtask < Parallelism.
	Subtask int
	// Parallelism is the operator's number of subtasks.
	Parallelism int
	// MaxParallelism is the number of key groups of the job.
	MaxParallelism int
	// KeyGroups is the range of key groups this subtask owns.
	KeyGroups KeyGroupRange
}

// KeyGroupRange is the half-open range [Start, End) of key groups.
type KeyGroupRange struct {
	Start, End int
}

// Contains reports whether key group g is in r.
func (r KeyGroupRange) Contains(g int) bool { return g >= r.Start && g < r.End }

// Intersects reports whether r and o share a key group.
func (r KeyGroupRange) Intersects(o KeyGroupRange) bool { return r.Start < o.End && o.Start < r.End }

// String formats r as "[start,end)".
func (r KeyGroupRange) String() string { return fmt.Sprintf("[%d,%d)", r.Start, r.End) }

// The constants of keyed state every backend shares.
const (
	// KeyGroupPrefixLen is the length of the key group prefix every state key starts with.
	KeyGroupPrefixLen = 2
	// FormatCanonical is the format of full snapshots that every backend can restore: the
	// stream written by package sdk/kvstream.
	FormatCanonical = "flowstate-kv-v1"
)

// KeyGroupOf returns the key group a state key belongs to: every key the runner writes
// starts with its key group as a big-endian uint16. It returns -1 for a key shorter than
// the prefix.
func KeyGroupOf(key []byte) int {
	if len(key) < KeyGroupPrefixLen {
		return -1
	}
	return int(binary.BigEndian.Uint16(key))
}

// KeyGroupPrefix returns the 2-byte prefix of keys in key group g.
func KeyGroupPrefix(g int) []byte {
	return binary.BigEndian.AppendUint16(nil, uint16(g))
}

// Mutation is one change in a batched write.
type Mutation struct {
	// Key is the state key.
	Key []byte
	// Value is the new value; ignored when Delete is set. It may be empty.
	Value []byte
	// Delete removes Key.
	Delete bool
}

// KV is a key and its value.
type KV struct {
	Key, Value []byte
}

// KeyedStateBackend holds the state of one operator subtask as ordered bytes. Keys start
// with their key group (see KeyGroupOf); the runner owns everything after that prefix.
//
// The runner calls the methods of one keyed backend from one goroutine at a time, except
// that Snapshot.Write runs concurrently with later Get, Write, Scan and Snapshot calls (and
// the Write of other snapshots): each snapshot must keep the view frozen by its Snapshot
// while processing goes on. sdktest checks it (OverlappingSnapshotsEachKeepTheirView).
//
// Slices passed to a method (the keys, the mutations, and the bytes in them) are the
// caller's again when it returns, and the caller may reuse them; slices it returns are the
// caller's to change.
type KeyedStateBackend interface {
	// Get reads many keys in one call. values[i] is nil when keys[i] is absent and a non-nil
	// (possibly empty) slice when present.
	Get(ctx context.Context, keys [][]byte) (values [][]byte, err error)
	// Write applies mutations in order, many keys in one call.
	Write(ctx context.Context, mutations []Mutation) error
	// Scan returns up to limit pairs with start <= key < end in ascending key order. A nil
	// or empty end means no upper bound (the wire cannot tell them apart); limit <= 0 means
	// the implementation's own page size, and a page may hold fewer pairs than limit. To
	// read on, call again with start set to the last key returned plus a zero byte; an
	// empty result means the range is done.
	Scan(ctx context.Context, start, end []byte, limit int) ([]KV, error)
	// Snapshot is the synchronous part of a checkpoint: it freezes a consistent view of the
	// state as of now and returns quickly. Writes after it returns must not show in the
	// snapshot.
	Snapshot(ctx context.Context, opts SnapshotOptions) (Snapshot, error)
	// Restore loads state from the handles of earlier snapshots into this (empty) backend,
	// keeping only the keys of its own key groups. It reads every file of each handle, but
	// the files adopted in place (RemoteFileAdopter), which it may open where they are.
	// Handles may come from another backend when their Format is FormatCanonical. It returns an error wrapping ErrUnsupported for
	// a format it cannot read.
	Restore(ctx context.Context, handles []KeyedStateHandle, state StateReader) error
	// NotifyCheckpointComplete tells the backend that a checkpoint it took part in is
	// complete: its metadata is durable.
	NotifyCheckpointComplete(ctx context.Context, checkpointID int64) error
	// NotifyCheckpointAborted tells the backend that a checkpoint will never complete.
	NotifyCheckpointAborted(ctx context.Context, checkpointID int64) error
	// Close releases the backend and its local resources (working files included). Later
	// calls of its methods, and Write of its snapshots, return an error.
	Close() error
}

// SnapshotOptions describe the snapshot to take.
type SnapshotOptions struct {
	// CheckpointID is the checkpoint's id, increasing within a job.
	CheckpointID int64
	// Savepoint asks for a self-contained snapshot in FormatCanonical, written only with
	// ScopeExclusive streams, that any backend can restore.
	Savepoint bool
	// Full asks for a snapshot that references no stream of an earlier snapshot (Flink's
	// full checkpoint): an incremental backend writes a new base. The runner asks for it
	// after restoring a checkpoint it does not own (claim mode NO_CLAIM), until a
	// checkpoint completes. A backend that never references earlier streams may ignore it.
	Full bool
}

// Snapshot is a frozen view of a keyed backend's state, taken by KeyedStateBackend.Snapshot.
type Snapshot interface {
	// Write is the asynchronous part of a checkpoint: it writes the frozen view through
	// streams and returns the handles that restore it. It is called at most once.
	Write(ctx context.Context, streams CheckpointStreamFactory) ([]KeyedStateHandle, error)
	// Release frees the frozen view. It is called exactly once, after Write or instead of
	// it.
	Release()
}

// KeyedStateHandle points to the snapshot of some key groups of one keyed backend.
type KeyedStateHandle struct {
	// KeyGroups is the range of key groups whose state the handle holds.
	KeyGroups KeyGroupRange
	// Format names the layout of Files: FormatCanonical, or a backend's own format, for
	// example "leveldb-incremental-v1".
	Format string
	// Files are the streams of the snapshot, by a name the backend chose.
	Files []NamedStateHandle
	// Meta is small backend-specific data kept in the checkpoint metadata (at most a few
	// KiB), for example the list of a native snapshot's files.
	Meta []byte
}

// NamedStateHandle is a stream of a snapshot and the name its backend gave it.
type NamedStateHandle struct {
	Name   string
	Handle StreamStateHandle
}

// StateReader opens the streams of a snapshot during Restore; the runner provides it and
// reads the bytes from the checkpoint storage that wrote them.
type StateReader interface {
	// Open returns the bytes of h. Reading to the end verifies h's size and checksum; a
	// mismatch is an error wrapping ErrCorrupt.
	Open(ctx context.Context, h StreamStateHandle) (io.ReadCloser, error)
}

// Package checkpoint holds the runner's side of checkpoints: the metadata format, the
// checksumming stream wrappers between state backends and checkpoint storages, and the
// store of completed checkpoints (Store) that retains, publishes and discards them, and
// what a restore asks of it (recover.go: list the job's checkpoints, pick the newest whole
// one or resolve a pointer, adopt the earlier ones, clean an interrupted run's leftovers).
// The coordinator that triggers and completes checkpoints is the engine's (runtime/dataflow),
// which uses this package.
//
// It sits below the engine: it imports only the SDK (sdk, sdk/host), and must never import
// anything else of the runtime (not the engine, the configuration, the runner, the monitor
// or the plugin host), nor a plugin.
package checkpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// MetadataVersion is the version of the metadata format this runner writes.
const MetadataVersion = 1

var metadataMagic = []byte("FLOWSTATE-METADATA\n")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Metadata describes one completed checkpoint or savepoint: what the runner needs to
// restore every task. It is stored through the checkpoint storage's metadata stream.
type Metadata struct {
	Version        int       `json:"version"`
	JobID          string    `json:"job_id"`
	CheckpointID   int64     `json:"checkpoint_id"`
	Savepoint      bool      `json:"savepoint,omitempty"`
	Time           time.Time `json:"time"`
	Backend        string    `json:"backend"`
	MaxParallelism int       `json:"max_parallelism"`
	// JobType is the type of the job that took the checkpoint (job.type of a built-in
	// job); empty when the job declared none, or in metadata written before it existed.
	JobType   string          `json:"job_type,omitempty"`
	Operators []OperatorState `json:"operators"`
	// Incremental says the checkpoint references shared state (incremental snapshots).
	Incremental bool `json:"incremental,omitempty"`
	// AddedBytes is the state this checkpoint uploaded: its size minus the shared state it
	// references from earlier checkpoints.
	AddedBytes int64 `json:"added_bytes"`
	// Epoch is the lease epoch of the runner that wrote the metadata: its fencing token on
	// the job (runtime/ownership), which every takeover raises by one. `--from latest`
	// prefers the highest epoch, then the highest id (Newer), so that the late metadata of
	// a runner that lost the job never wins over a checkpoint of its successor. 0 in
	// metadata written before it was recorded, and by a run that holds no lease (a
	// storage whose checkpoints die with its process).
	Epoch int64 `json:"epoch,omitempty"`
	// Tasks, when set, makes the metadata the manifest of a savepoint of a distributed job
	// (runner savepoint in distributed mode): the pointer of every task's savepoint, by
	// task. A manifest holds no state of its own: `runner run --from` restores each task
	// from its savepoint, in distributed mode only.
	Tasks map[string]string `json:"tasks,omitempty"`
}

// Newer reports whether a is newer than b in the order `--from latest`, retention and the
// offline commands use: the higher lease epoch first, then the higher checkpoint id. A
// checkpoint of epoch E+1 is newer than any of epoch E, whatever their ids: the runner
// that took the job over at E+1 may have committed output past a checkpoint of E that
// landed late, never the other way round.
func Newer(a, b *Metadata) bool {
	if a.Epoch != b.Epoch {
		return a.Epoch > b.Epoch
	}
	return a.CheckpointID > b.CheckpointID
}

// OperatorState is the state of every subtask of one operator.
type OperatorState struct {
	ID          string `json:"id"`
	Parallelism int    `json:"parallelism"`
	// Type says what the operator is (see OperatorShape.Type); empty in metadata written
	// before it was recorded.
	Type string `json:"type,omitempty"`
	// States are the keyed states the operator declared, with their types.
	States   []StateShape   `json:"states,omitempty"`
	Subtasks []SubtaskState `json:"subtasks"`
	// Finished says the operator, a source, had ended its input for good when the
	// checkpoint was taken: it is the savepoint of `runner stop --drain`, or a checkpoint of
	// a job restored from one. A restored job does not run a finished source again (Flink's
	// finished operators, FLIP-147).
	Finished bool `json:"finished,omitempty"`
}

// SubtaskState is the state of one subtask: small operator state (source offsets, sink
// transactions) kept inline, and the handles of its keyed state.
type SubtaskState struct {
	Index    int                    `json:"index"`
	Operator []byte                 `json:"operator,omitempty"`
	Keyed    []sdk.KeyedStateHandle `json:"keyed,omitempty"`
}

// StateSize returns the bytes of state the checkpoint references: keyed state streams and
// inline operator state.
func (m *Metadata) StateSize() int64 {
	var n int64
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			n += int64(len(st.Operator))
			for _, h := range st.Keyed {
				for _, f := range h.Files {
					n += f.Handle.Size
				}
			}
		}
	}
	return n
}

// SetDelta fills Incremental and AddedBytes against prev, the job's previous checkpoint
// (nil for none): shared streams prev already referenced were not uploaded again.
func (m *Metadata) SetDelta(prev *Metadata) {
	old := map[string]bool{}
	if prev != nil {
		for _, h := range sharedHandles(prev) {
			old[h.Ref] = true
		}
	}
	m.Incremental, m.AddedBytes = false, m.StateSize()
	for _, h := range sharedHandles(m) {
		m.Incremental = true
		if old[h.Ref] {
			m.AddedBytes -= h.Size
		}
	}
}

// Operator returns the state of operator id, or nil.
func (m *Metadata) Operator(id string) *OperatorState {
	for i := range m.Operators {
		if m.Operators[i].ID == id {
			return &m.Operators[i]
		}
	}
	return nil
}

// Encode serializes m: a magic line, the JSON body, and a trailer with the body's length
// and CRC-32C, so truncation and bit flips are detected.
func (m *Metadata) Encode() ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint metadata: %w", err)
	}
	out := make([]byte, 0, len(metadataMagic)+len(body)+12)
	out = append(out, metadataMagic...)
	out = append(out, body...)
	out = binary.BigEndian.AppendUint64(out, uint64(len(body)))
	out = binary.BigEndian.AppendUint32(out, crc32.Checksum(body, castagnoli))
	return out, nil
}

// DecodeMetadata parses what Encode wrote. Damaged input gives an error wrapping
// sdk.ErrCorrupt.
func DecodeMetadata(b []byte) (*Metadata, error) {
	if !bytes.HasPrefix(b, metadataMagic) {
		return nil, fmt.Errorf("checkpoint metadata: not Flowstate metadata (bad header): %w", sdk.ErrCorrupt)
	}
	b = b[len(metadataMagic):]
	if len(b) < 12 {
		return nil, fmt.Errorf("checkpoint metadata: truncated (%d bytes after header): %w", len(b), sdk.ErrCorrupt)
	}
	body, trailer := b[:len(b)-12], b[len(b)-12:]
	if n := binary.BigEndian.Uint64(trailer); n != uint64(len(body)) {
		return nil, fmt.Errorf("checkpoint metadata: body is %d bytes, trailer says %d: %w", len(body), n, sdk.ErrCorrupt)
	}
	if sum := binary.BigEndian.Uint32(trailer[8:]); sum != crc32.Checksum(body, castagnoli) {
		return nil, fmt.Errorf("checkpoint metadata: checksum mismatch: %w", sdk.ErrCorrupt)
	}
	var m Metadata
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("checkpoint metadata: %v: %w", err, sdk.ErrCorrupt)
	}
	if m.Version != MetadataVersion {
		return nil, fmt.Errorf("checkpoint metadata: version %d, this runner reads %d: %w", m.Version, MetadataVersion, sdk.ErrUnsupported)
	}
	return &m, nil
}

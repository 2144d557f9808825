package stateproc

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
)

// Report is what Inspect finds in a checkpoint. Entry counts and bytes are those of the
// handles it decodes (see Decodes); Sizes are those of every stream.
type Report struct {
	Pointer        string           `json:"pointer"`
	Job            string           `json:"job"`
	JobType        string           `json:"job_type,omitempty"`
	Kind           string           `json:"kind"` // "checkpoint" or "savepoint"
	CheckpointID   int64            `json:"checkpoint_id"`
	Time           time.Time        `json:"time"`
	Backend        string           `json:"backend"`
	MaxParallelism int              `json:"max_parallelism"`
	Incremental    bool             `json:"incremental"`
	Size           int64            `json:"size"`
	AddedBytes     int64            `json:"added_bytes"`
	Operators      []OperatorReport `json:"operators"`
	// SharedFiles are the shared streams (sdk.ScopeShared) the checkpoint references,
	// which other checkpoints may reference too.
	SharedFiles []SharedFile `json:"shared_files"`
}

// OperatorReport is the state of one operator.
type OperatorReport struct {
	ID          string `json:"id"`
	Type        string `json:"type,omitempty"`
	Parallelism int    `json:"parallelism"`
	// OperatorStateBytes is the non-keyed state (source positions, sink transactions) of
	// every subtask, kept inline in the metadata.
	OperatorStateBytes int64 `json:"operator_state_bytes"`
	// Entries and Bytes total the keyed entries of the decoded handles.
	Entries  int64           `json:"entries"`
	Bytes    int64           `json:"bytes"`
	States   []StateReport   `json:"states"`
	Subtasks []SubtaskReport `json:"subtasks"`
}

// StateReport is one keyed state of an operator: declared in the metadata, or found in its
// entries.
type StateReport struct {
	Name    string `json:"name"`
	Type    string `json:"type"` // "" when the metadata declares none
	Entries int64  `json:"entries"`
	Bytes   int64  `json:"bytes"`
}

// SubtaskReport is the state of one subtask.
type SubtaskReport struct {
	Index              int            `json:"index"`
	OperatorStateBytes int            `json:"operator_state_bytes"`
	Handles            []HandleReport `json:"handles"`
}

// HandleReport is one keyed state handle: some key groups of a subtask.
type HandleReport struct {
	// KeyGroups is the half-open range [start, end) of key groups it holds.
	KeyGroups [2]int       `json:"key_groups"`
	Format    string       `json:"format"`
	Files     []FileReport `json:"files"`
	// Decoded says Entries and Bytes were counted; false for a format this package does
	// not decode.
	Decoded bool  `json:"decoded"`
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// FileReport is one stream of a handle.
type FileReport struct {
	Name     string `json:"name"`
	Ref      string `json:"ref"` // "inline": kept in the metadata
	Scope    string `json:"scope"`
	Size     int64  `json:"size"`
	Checksum string `json:"checksum"` // CRC-32C, hex
}

// SharedFile is a shared stream and where the checkpoint references it.
type SharedFile struct {
	Ref  string `json:"ref"`
	Size int64  `json:"size"`
	// ReferencedBy names the operators and subtasks ("count/1") whose handles list it.
	ReferencedBy []string `json:"referenced_by"`
}

// Inspect reads every keyed state stream of c and reports what it holds: per operator its
// parallelism, non-keyed state, keyed states with their entry counts and bytes, each
// subtask's handles with their key groups and streams; and the shared files referenced.
// Streams are verified as they are read: a damaged one fails Inspect (Verify lists them
// all).
func (c *Checkpoint) Inspect(ctx context.Context) (*Report, error) {
	m := c.Metadata
	rep := &Report{
		Pointer: c.Location.ExternalPointer, Job: m.JobID, JobType: m.JobType, Kind: c.Kind(),
		CheckpointID: m.CheckpointID, Time: m.Time, Backend: m.Backend, MaxParallelism: m.MaxParallelism,
		Incremental: m.Incremental, Size: m.StateSize(), AddedBytes: m.AddedBytes,
		Operators: []OperatorReport{}, SharedFiles: []SharedFile{},
	}
	shared := map[string]*SharedFile{}
	for i := range m.Operators {
		op := &m.Operators[i]
		or, err := c.inspectOperator(ctx, op)
		if err != nil {
			return nil, err
		}
		rep.Operators = append(rep.Operators, *or)
		for _, st := range op.Subtasks {
			for _, h := range st.Keyed {
				for _, f := range h.Files {
					if f.Handle.Scope != sdk.ScopeShared || f.Handle.Ref == "" {
						continue
					}
					sf := shared[f.Handle.Ref]
					if sf == nil {
						sf = &SharedFile{Ref: f.Handle.Ref, Size: f.Handle.Size}
						shared[f.Handle.Ref] = sf
					}
					sf.ReferencedBy = append(sf.ReferencedBy, fmt.Sprintf("%s/%d", op.ID, st.Index))
				}
			}
		}
	}
	for _, sf := range shared {
		rep.SharedFiles = append(rep.SharedFiles, *sf)
	}
	sort.Slice(rep.SharedFiles, func(i, j int) bool { return rep.SharedFiles[i].Ref < rep.SharedFiles[j].Ref })
	return rep, nil
}

// inspectOperator reports one operator, reading its decodable handles.
func (c *Checkpoint) inspectOperator(ctx context.Context, op *checkpoint.OperatorState) (*OperatorReport, error) {
	or := &OperatorReport{ID: op.ID, Type: op.Type, Parallelism: op.Parallelism, States: []StateReport{}, Subtasks: []SubtaskReport{}}
	states := map[string]*StateReport{}
	var order []string
	stateOf := func(name, typ string) *StateReport {
		s := states[name]
		if s == nil {
			s = &StateReport{Name: name, Type: typ}
			states[name] = s
			order = append(order, name)
		}
		return s
	}
	for _, s := range op.States {
		stateOf(s.Name, s.Type)
	}
	for _, st := range byIndex(op.Subtasks) {
		sr := SubtaskReport{Index: st.Index, OperatorStateBytes: len(st.Operator), Handles: []HandleReport{}}
		or.OperatorStateBytes += int64(len(st.Operator))
		for _, h := range st.Keyed {
			hr := HandleReport{KeyGroups: [2]int{h.KeyGroups.Start, h.KeyGroups.End}, Format: h.Format, Decoded: Decodes(h.Format), Files: []FileReport{}}
			for _, f := range h.Files {
				hr.Files = append(hr.Files, FileReport{Name: f.Name, Ref: refOf(f.Handle), Scope: f.Handle.Scope.String(),
					Size: f.Handle.Size, Checksum: fmt.Sprintf("%08x", f.Handle.Checksum)})
			}
			if hr.Decoded {
				one := &checkpoint.OperatorState{ID: op.ID, Subtasks: []checkpoint.SubtaskState{{Index: st.Index, Keyed: []sdk.KeyedStateHandle{h}}}}
				err := c.Entries(ctx, one, func(e Entry) error {
					s := stateOf(e.State, "")
					s.Entries++
					s.Bytes += int64(e.Size)
					hr.Entries++
					hr.Bytes += int64(e.Size)
					return nil
				})
				if err != nil {
					return nil, err
				}
				or.Entries += hr.Entries
				or.Bytes += hr.Bytes
			}
			sr.Handles = append(sr.Handles, hr)
		}
		or.Subtasks = append(or.Subtasks, sr)
	}
	for _, n := range order {
		or.States = append(or.States, *states[n])
	}
	return or, nil
}

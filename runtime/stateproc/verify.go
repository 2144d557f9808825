package stateproc

import (
	"context"
	"io"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/sdk"
)

// StreamCheck is the result of reading one keyed state stream back.
type StreamCheck struct {
	Operator string `json:"operator"`
	Subtask  int    `json:"subtask"`
	// KeyGroups is the half-open range [start, end) of the stream's handle.
	KeyGroups [2]int `json:"key_groups"`
	Name      string `json:"name"`
	Ref       string `json:"ref"` // "inline": kept in the metadata
	Size      int64  `json:"size"`
	// Err says what is wrong with the stream; nil when it read back intact.
	Err error `json:"-"`
	// Error is Err's message, for JSON.
	Error string `json:"error,omitempty"`
}

// Verify reads every keyed state stream of c through its storage and checks its size and
// CRC-32C against its handle. It returns one check per stream, damaged or not; the metadata
// itself was checked by Open. It stops early only when ctx ends.
func (c *Checkpoint) Verify(ctx context.Context) ([]StreamCheck, error) {
	var out []StreamCheck
	for i := range c.Metadata.Operators {
		err := c.checkStreams(ctx, &c.Metadata.Operators[i], func(sc StreamCheck) error {
			out = append(out, sc)
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// checkStreams reads every keyed state stream of op back, checking its size and CRC-32C,
// and calls fn with each check, subtask by subtask (by index). It stops at fn's first error
// or when ctx ends.
func (c *Checkpoint) checkStreams(ctx context.Context, op *checkpoint.OperatorState, fn func(StreamCheck) error) error {
	r := checkpoint.Reader{Access: c.Access}
	for _, st := range byIndex(op.Subtasks) {
		for _, h := range st.Keyed {
			for _, f := range h.Files {
				if err := ctx.Err(); err != nil {
					return err
				}
				sc := StreamCheck{Operator: op.ID, Subtask: st.Index, KeyGroups: [2]int{h.KeyGroups.Start, h.KeyGroups.End},
					Name: f.Name, Ref: refOf(f.Handle), Size: f.Handle.Size}
				if sc.Err = readAll(ctx, r, f.Handle); sc.Err != nil {
					sc.Error = sc.Err.Error()
				}
				if err := fn(sc); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// readAll reads h to its end through r, which verifies it.
func readAll(ctx context.Context, r checkpoint.Reader, h sdk.StreamStateHandle) error {
	rc, err := r.Open(ctx, h)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err
}

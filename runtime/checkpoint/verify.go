package checkpoint

import (
	"context"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/sdk"
)

// Verify reads every keyed state stream m references through access and checks its size
// and CRC-32C against its handle, so that a damaged checkpoint is found before a restore
// relies on it. The error names the operator, the subtask and the stream, and wraps
// sdk.ErrCorrupt (or the storage's error when a stream cannot be opened).
func Verify(ctx context.Context, access sdk.CheckpointStorageAccess, m *Metadata) error {
	r := Reader{Access: access}
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			for _, kh := range st.Keyed {
				for _, f := range kh.Files {
					if err := verifyStream(ctx, r, f.Handle); err != nil {
						return fmt.Errorf("checkpoint %d: operator %s subtask %d: %w", m.CheckpointID, op.ID, st.Index, err)
					}
				}
			}
		}
	}
	return nil
}

func verifyStream(ctx context.Context, r Reader, h sdk.StreamStateHandle) error {
	rc, err := r.Open(ctx, h)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc) // the verifying reader's errors name the stream
	return err
}

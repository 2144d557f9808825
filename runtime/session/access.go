package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowstate/flowstate/runtime/restart"
	"github.com/flowstate/flowstate/sdk"
)

// newAccess creates the job's storage access of the storage plugin's current process,
// within CallTimeout: the storage's, behind the job's ownership (ownership.Owner.Guard,
// which takes the storage's lease the first time), with its base locations initialized.
func (s *Session) newAccess(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.CallTimeout())
	defer cancel()
	in, job := s.storage, s.opts.Job
	access, err := s.Storage().CreateCheckpointStorage(ctx, job)
	if err != nil {
		err = fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), job, err)
		if errors.Is(err, sdk.ErrInvalidArgument) { // the storage refused the job's id
			err = restart.Permanent(err)
		}
		return err
	}
	if access, err = s.opts.Owner.Guard(ctx, in.Name(), s.opts.Config.Checkpointing.Dir, access); err != nil {
		return err
	}
	if err := access.InitializeBaseLocationsForCheckpoint(ctx); err != nil {
		return fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), job, err)
	}
	s.access = access
	return nil
}

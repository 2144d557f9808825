package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/sdk"
)

// The checkpoint side of a run's start and recovery: what the storage holds of the job
// when a run starts (List, Newest, Resolve), what the run's store adopts of it (Adopt),
// and what the store keeps after a failure (Reopen, DisposeUnconfirmed). Every call into
// the storage is bounded by the timeout given (0: no bound).

// ErrNoCheckpoint says the storage lists no completed checkpoint of the job that reads back
// intact.
var ErrNoCheckpoint = errors.New("no intact completed checkpoint")

// Damaged reports whether err says a checkpoint's bytes are damaged or missing, as
// opposed to a storage that failed to answer.
func Damaged(err error) bool {
	return errors.Is(err, sdk.ErrCorrupt) || errors.Is(err, sdk.ErrNotFound) || errors.Is(err, sdk.ErrUnsupported)
}

// within runs f with ctx bounded by timeout (0: no bound).
func within(ctx context.Context, timeout time.Duration, f func(ctx context.Context) error) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return f(ctx)
}

// List returns the job's completed checkpoints (not savepoints) in the store's storage,
// oldest first, and records their ids as used (ObserveID).
func (s *Store) List(ctx context.Context, timeout time.Duration) ([]sdk.CompletedCheckpointStorageLocation, error) {
	var list []sdk.CompletedCheckpointStorageLocation
	err := within(ctx, timeout, func(ctx context.Context) (err error) {
		list, err = s.access.ListCompletedCheckpoints(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		s.ObserveID(c.CheckpointID)
	}
	return list, nil
}

// Newest returns the checkpoint `--from latest` restores: of job's completed checkpoints
// list whose metadata loads (each read within loadTimeout) and whose state reads back
// intact (sizes and CRC-32C of every stream, each check within verifyTimeout), the newest
// by Newer: the highest lease epoch, then the highest id. A runner that lost the job while
// its metadata was being written may land that metadata after its successor took over; by
// the epoch its successor's checkpoints win over it whatever the ids (see
// docs/reliability.md). It warns on log about each damaged checkpoint it skips: metadata
// that does not decode, belongs to another job, or whose id is not its location's, and
// state that does not read back intact. None left is ErrNoCheckpoint, naming the damaged
// ones; a storage that failed to answer is an error of its own, as falling back to an
// older checkpoint would then be wrong.
func Newest(ctx context.Context, access sdk.CheckpointStorageAccess, list []sdk.CompletedCheckpointStorageLocation, job string,
	loadTimeout, verifyTimeout time.Duration, log hclog.Logger) (*Completed, error) {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	var skipped []string
	skip := func(loc sdk.CompletedCheckpointStorageLocation, err error) error {
		if !Damaged(err) {
			return fmt.Errorf("read checkpoint %s: %w", loc.ExternalPointer, err)
		}
		log.Warn("skipping a damaged checkpoint; trying the previous one", "pointer", loc.ExternalPointer, "error", err)
		skipped = append(skipped, loc.ExternalPointer)
		return nil
	}
	var candidates []*Completed
	for i := len(list) - 1; i >= 0; i-- { // the highest ids first: their warnings come first
		var m *Metadata
		err := within(ctx, loadTimeout, func(ctx context.Context) (err error) {
			m, err = Load(ctx, access, list[i])
			return err
		})
		if err == nil && m.JobID != job {
			err = fmt.Errorf("%s: the metadata is of job %q, not %q: %w", list[i].ExternalPointer, m.JobID, job, sdk.ErrCorrupt)
		}
		if err != nil {
			if err := skip(list[i], err); err != nil {
				return nil, err
			}
			continue
		}
		candidates = append(candidates, &Completed{Location: list[i], Metadata: m, Owned: true})
	}
	SortNewestFirst(candidates)
	for _, c := range candidates {
		err := within(ctx, verifyTimeout, func(ctx context.Context) error { return Verify(ctx, access, c.Metadata) })
		if err != nil {
			if err := skip(c.Location, err); err != nil {
				return nil, err
			}
			continue
		}
		return c, nil
	}
	if len(skipped) > 0 {
		return nil, fmt.Errorf("%w (damaged: %v)", ErrNoCheckpoint, skipped)
	}
	return nil, ErrNoCheckpoint
}

// SortNewestFirst sorts cs by Newer, the newest first; equal ones keep their order.
func SortNewestFirst(cs []*Completed) {
	slices.SortStableFunc(cs, func(a, b *Completed) int {
		switch {
		case Newer(a.Metadata, b.Metadata):
			return -1
		case Newer(b.Metadata, a.Metadata):
			return 1
		}
		return 0
	})
}

// Resolve loads, within timeout, the checkpoint or savepoint pointer names in storage,
// reading its metadata through access; owned says whether the run owns it (claim mode
// CLAIM), so that retention may dispose of it.
func Resolve(ctx context.Context, storage sdk.CheckpointStorage, access sdk.CheckpointStorageAccess, pointer string, owned bool, timeout time.Duration) (*Completed, error) {
	var c Completed
	err := within(ctx, timeout, func(ctx context.Context) error {
		loc, err := storage.ResolveCheckpoint(ctx, pointer)
		if err != nil {
			return err
		}
		m, err := Load(ctx, access, loc)
		if err != nil {
			return err
		}
		c = Completed{Location: loc, Metadata: m, Owned: owned}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// Adopt retains what a run starts from: restore (nil for a fresh start) and, among earlier
// (the job's completed checkpoints, oldest first, given when the run resumes the newest of
// them), the intact ones older than restore, applying retention as AddAll does. Then it
// deletes the job's shared streams that no completed checkpoint in the storage references
// nor restore does: the uploads of checkpoints a crash interrupted. Neither failure stops
// the run: each is a warning on log. Each metadata read is bounded by timeout.
func (s *Store) Adopt(ctx context.Context, restore *Completed, earlier []sdk.CompletedCheckpointStorageLocation, timeout time.Duration, log hclog.Logger) {
	var m *Metadata
	if restore != nil {
		m = restore.Metadata
		retained := append(s.earlier(ctx, earlier, restore, timeout, log), restore)
		if err := s.AddAll(ctx, retained); err != nil {
			log.Warn("retention", "error", err)
		}
	}
	if n, err := cleanLeftovers(ctx, s.access, m); err != nil {
		log.Warn("cleaning up the shared state of checkpoints that never completed", "error", err)
	} else if n > 0 {
		log.Info("deleted the shared state of checkpoints that never completed", "streams", n)
	}
}

// earlier returns the intact completed checkpoints of list older than latest by Newer
// (a lower lease epoch, or the same and a lower id), oldest first, for the store to retain
// (and dispose of beyond num-retained) beside latest: the late checkpoint of a runner that
// lost the job is one of them even when its id is higher. Damaged ones are left alone:
// they never resolve to a restorable state, and what they reference stays with them.
func (s *Store) earlier(ctx context.Context, list []sdk.CompletedCheckpointStorageLocation, latest *Completed, timeout time.Duration, log hclog.Logger) []*Completed {
	var out []*Completed
	for _, loc := range list {
		if loc.ExternalPointer == latest.Location.ExternalPointer {
			continue
		}
		var m *Metadata
		err := within(ctx, timeout, func(ctx context.Context) (err error) {
			m, err = Load(ctx, s.access, loc)
			return err
		})
		if err != nil {
			log.Warn("leaving a damaged checkpoint alone", "pointer", loc.ExternalPointer, "error", err)
			continue
		}
		if !Newer(latest.Metadata, m) {
			continue
		}
		out = append(out, &Completed{Location: loc, Metadata: m, Owned: true})
	}
	SortNewestFirst(out)
	slices.Reverse(out)
	return out
}

// Reopen moves the store to access, the storage access of a restarted storage process, and
// checks within timeout that storage still resolves the newest retained checkpoint (a
// storage without a directory may keep checkpoints in its process memory). The error is
// the storage's: sdk.ErrNotFound says the checkpoint is gone with the process.
func (s *Store) Reopen(ctx context.Context, access sdk.CheckpointStorageAccess, storage sdk.CheckpointStorage, timeout time.Duration) error {
	s.SetAccess(access)
	latest := s.Latest()
	if latest == nil {
		return nil
	}
	return within(ctx, timeout, func(ctx context.Context) error {
		_, err := storage.ResolveCheckpoint(ctx, latest.Location.ExternalPointer)
		return err
	})
}

// DisposeUnconfirmed deletes the checkpoints that completed in the storage but that the
// runner never confirmed (the storage failed or died while answering the metadata
// publication): those newer than both floor (the newest in the storage before the run
// started) and the newest retained. A restore goes back past them and discards their sink
// transactions, so a later --from latest must not find them. Each call into the storage is
// bounded by timeout; a failure is a warning on log.
func (s *Store) DisposeUnconfirmed(ctx context.Context, floor int64, timeout time.Duration, log hclog.Logger) {
	newest := floor
	if latest := s.Latest(); latest != nil {
		newest = max(newest, latest.Metadata.CheckpointID)
	}
	access := s.access
	var list []sdk.CompletedCheckpointStorageLocation
	if err := within(ctx, timeout, func(ctx context.Context) (err error) {
		list, err = access.ListCompletedCheckpoints(ctx)
		return err
	}); err != nil {
		log.Warn("listing checkpoints to dispose of unconfirmed ones", "error", err)
		return
	}
	for _, c := range list {
		if c.CheckpointID <= newest {
			continue
		}
		log.Warn("disposing of a checkpoint the runner never confirmed", "id", c.CheckpointID, "pointer", c.ExternalPointer)
		if err := within(ctx, timeout, func(ctx context.Context) error { return access.DisposeCheckpoint(ctx, c) }); err != nil {
			log.Warn("disposing of an unconfirmed checkpoint", "id", c.CheckpointID, "error", err)
		}
	}
}

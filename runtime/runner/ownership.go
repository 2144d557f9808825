package runner

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/lease"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/progress"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/filelease"
)

// OutputLeaseFile is the file in a job's output directory that holds the lease on it.
// Its name starts with '_', so readers of the output skip it (connectors.CommittedFiles).
const OutputLeaseFile = "_flowstate.lease"

// releaseTimeout bounds the last write of a lease when a run ends.
const releaseTimeout = 10 * time.Second

// ownership holds the leases that make a runner the one owner of its job: the lease on the
// job's record in its checkpoint storage (acquired when the storage access is created,
// before anything in the storage is touched) and the lease on its output directory. When
// either is lost the run's context is cancelled with the loss as its cause, and every
// commit and every deletion in the storage checks them first (check).
type ownership struct {
	job    string
	holder lease.Holder
	opts   lease.Options
	log    hclog.Logger
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	storage  *lease.Lease // nil until attach
	ownStore bool         // storage lives in the storage's LeaseStore (else a local file)
	output   *lease.Lease // nil without an output directory
	stop     chan struct{}
	watchers sync.WaitGroup
}

// own makes the executor the owner of job: it takes the lease on the job's output
// directory, if it has one, and prepares the lease on the job's record in the checkpoint
// storage, which x.access takes. It returns the run's context, cancelled once a lease is
// lost, and done, which releases the leases and, when one was lost, replaces *err with
// that loss.
func (x *Executor) own(ctx context.Context, job *dataflow.Job) (context.Context, func(err *error), error) {
	ttl := x.Config.Job.LeaseTimeout
	if ttl <= 0 {
		ttl = config.DefaultLeaseTimeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	o := &ownership{
		job:    job.Name,
		holder: lease.Self(job.Name, x.ControlAddress),
		opts:   lease.Options{TTL: ttl, Logger: x.Logger, TimeoutKey: config.KeyLeaseTimeout},
		log:    x.Logger,
		cancel: cancel,
		stop:   make(chan struct{}),
	}
	if dir := job.OutputDir(); dir != "" {
		for {
			l, err := o.acquire(ctx, filelease.New(filepath.Join(dir, OutputLeaseFile)), "output directory "+dir)
			if err == nil {
				o.output = l
				break
			}
			if waited, werr := x.waitOut(ctx, err); !waited || werr != nil {
				cancel(nil)
				return nil, nil, cmp.Or(werr, err)
			}
		}
	}
	x.owner = o
	return ctx, func(err *error) { *err = o.done(*err); x.owner = nil }, nil
}

// waitOut waits until the lease that refused a run (err, a *lease.HeldError) expires, with
// a countdown, when the executor waits for leases (WaitForLease); then the caller tries
// again. It reports whether it waited; its error is ctx's, if ctx ended first.
func (x *Executor) waitOut(ctx context.Context, err error) (bool, error) {
	var held *lease.HeldError
	if !x.WaitForLease || !errors.As(err, &held) {
		return false, nil
	}
	left := max(held.Left(), 0) + leaseWaitMargin
	x.Logger.Warn("the job is held by another runner: waiting for its lease to expire, then taking it over",
		"lease", held.Where, "holder", held.Record.Holder.String(), "expires-in", left.Round(time.Millisecond), "why", held.Alive)
	title := fmt.Sprintf("lease of %s expires (%s %s)", held.Where, config.KeyLeaseTimeout, held.Record.TTL())
	if err := progress.Countdown(ctx, progress.Options{Title: title, Logger: x.Logger}, left); err != nil {
		return true, fmt.Errorf("waiting for the lease of %s to expire: %w", held.Where, err)
	}
	return true, nil
}

// leaseWaitMargin is waited past a lease's expiry, so that the next look finds it expired.
const leaseWaitMargin = 10 * time.Millisecond

// acquire takes one lease and watches it.
func (o *ownership) acquire(ctx context.Context, store sdk.LeaseStore, where string) (*lease.Lease, error) {
	opts := o.opts
	opts.Where = where
	l, err := lease.Acquire(ctx, store, o.holder, opts)
	if err != nil {
		return nil, err
	}
	r := l.Record()
	if prev, dead, ok := l.TookOver(); ok && dead != "" {
		o.log.Warn("took over a lease at once: its holder has ended on this machine", "lease", where, "epoch", r.Epoch,
			"previous", prev.Holder.String(), "why", dead, "expires", prev.Expires().Format(time.RFC3339Nano))
	} else if ok {
		o.log.Warn("took over a lease whose holder stopped renewing it", "lease", where, "epoch", r.Epoch,
			"previous", prev.Holder.String(), "expired", prev.Expires().Format(time.RFC3339Nano))
	} else {
		o.log.Info("holding the lease", "lease", where, "epoch", r.Epoch, "timeout", opts.TTL)
	}
	o.watchers.Add(1)
	go func() {
		defer o.watchers.Done()
		select {
		case <-l.Lost():
			o.cancel(l.Check())
		case <-o.stop:
		}
	}()
	return l, nil
}

// attach takes the lease on the job's record in the checkpoint storage the first time it
// sees an access of it; later accesses (after the storage plugin restarted) carry the
// renewals from then on. A storage whose checkpoints outlive its process but that keeps
// no lease record gets a lease in a file on this machine instead, with a warning; one
// whose checkpoints die with its process (jmstorage without a dir) shares nothing with
// other runners and needs none.
func (o *ownership) attach(ctx context.Context, in *pluginhost.Instance, dir string, access sdk.CheckpointStorageAccess) error {
	if o == nil {
		return nil
	}
	store, isStore := access.(sdk.LeaseStore)
	o.mu.Lock()
	held, ownStore := o.storage, o.ownStore
	o.mu.Unlock()
	if held != nil {
		if ownStore && isStore {
			held.SetStore(store)
		}
		return nil
	}
	where := fmt.Sprintf("checkpoint storage %s, job %q", in.Name(), o.job)
	if dir != "" {
		where = fmt.Sprintf("checkpoint storage %s (%s), job %q", in.Name(), dir, o.job)
	}
	if !isStore {
		if !access.SupportsHighlyAvailableStorage() {
			return nil
		}
		path, err := localLeasePath(in.Name(), dir, o.job)
		if err != nil {
			return err
		}
		o.log.Warn("the checkpoint storage keeps no lease record (sdk.LeaseStore): ownership of the job is enforced on this machine only",
			"storage", in.Name(), "lease", path)
		store, where = filelease.New(path), where+" (local lease "+path+")"
	}
	l, err := o.acquire(ctx, store, where)
	if err != nil {
		return err
	}
	o.mu.Lock()
	o.storage, o.ownStore = l, isStore
	o.mu.Unlock()
	return nil
}

// check returns nil while every lease is valid: the fence of every commit.
func (o *ownership) check() error {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	ls := []*lease.Lease{o.storage, o.output}
	o.mu.Unlock()
	for _, l := range ls {
		if l == nil {
			continue
		}
		if err := l.Check(); err != nil {
			return err
		}
	}
	return nil
}

// done releases the leases, storage first, and returns err, or the loss of a lease when
// one was lost: the run stopped because of it.
func (o *ownership) done(err error) error {
	close(o.stop)
	o.watchers.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	var lost error
	for _, l := range []*lease.Lease{o.storage, o.output} {
		if l == nil {
			continue
		}
		select {
		case <-l.Lost():
			lost = cmp.Or(lost, l.Cause(ctx))
			continue
		default:
		}
		if rerr := l.Release(ctx); errors.Is(rerr, lease.ErrLost) {
			lost = cmp.Or(lost, rerr)
		} else if rerr != nil {
			o.log.Warn("releasing a lease; the next runner waits for it to expire", "lease", l.Where(), "error", rerr)
		}
	}
	o.cancel(nil)
	if lost == nil || err == nil {
		return err
	}
	if !errors.Is(err, lease.ErrLost) && !errors.Is(err, context.Canceled) {
		o.log.Warn("the run ended after its lease was lost", "error", err)
	}
	return fmt.Errorf("job %q stopped without committing anything more: %w", o.job, lost)
}

// localLeasePath is the file of the lease a runner keeps on this machine for a storage
// without sdk.LeaseStore: in the user's runtime directory, named by a hash of the
// storage's name, its checkpoint directory and the job's name.
func localLeasePath(storage, dir, job string) (string, error) {
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base == "" {
		base = filepath.Join(os.TempDir(), fmt.Sprintf("flowstate-%d", os.Getuid()))
	}
	base = filepath.Join(base, "flowstate", "leases")
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("local lease directory: %w", err)
	}
	sum := sha256.Sum256([]byte(storage + "\x00" + dir + "\x00" + job))
	return filepath.Join(base, hex.EncodeToString(sum[:12])+".lease"), nil
}

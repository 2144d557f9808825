package ownership

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

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/filelease"
)

// OutputLeaseFile is the file in a job's output directory that holds the lease on it.
// Its name starts with '_', so readers of the output skip it (connectors.CommittedFiles).
const OutputLeaseFile = "_flowstate.lease"

// releaseTimeout bounds the last write of a lease when a run ends.
const releaseTimeout = 10 * time.Second

// Owner holds the leases that make a runner the one owner of its job: the lease on the
// job's record in its checkpoint storage (acquired by Guard when the first storage access
// is created, before anything in the storage is touched) and the lease on its output
// directory (acquired by Own). When either is lost the run's context is cancelled with the
// loss as its cause, and every commit and every deletion in the storage checks them first
// (Check). One Owner serves one run.
type Owner struct {
	job    string
	holder Holder
	opts   Options
	wait   bool
	log    hclog.Logger
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	storage  *Lease // nil until Guard
	ownStore bool   // storage lives in the storage's LeaseStore (else a local file)
	borrowed bool   // storage is Settings.Lease, the caller's to release
	output   *Lease // nil without an output directory
	stop     chan struct{}
	watchers sync.WaitGroup
}

// Settings configure an Owner.
type Settings struct {
	// Job is the job's name; Control the address of its control endpoint, recorded with
	// its leases so that savepoint and stop find it ("" for none).
	Job, Control string
	// Output is the job's output directory, "" when it has none.
	Output string
	// TTL is the lease timeout; TimeoutKey the configuration key it comes from, named
	// when a lease is refused.
	TTL        time.Duration
	TimeoutKey string
	// Wait makes a run whose job another runner holds wait, with a countdown, until that
	// runner's lease expires (Owner.Wait); without it such a run fails at once with a
	// *HeldError.
	Wait bool
	// Logger receives the leases' log; nil discards it.
	Logger hclog.Logger
	// Lease, when set, is a lease the caller holds already on the job (a task's, in a
	// distributed job's group of runners): it stands for the lease on the job's record in
	// the checkpoint storage, which the owner then never takes. Its loss cancels the run,
	// Check and Epoch are its, and Release leaves it to the caller.
	Lease *Lease
}

// Own makes the caller the owner of the job s names: it takes the lease on the job's
// output directory, if it has one (waiting out another holder when s.Wait), and prepares
// the lease on the job's record in the checkpoint storage, which Guard takes. It returns
// the run's context, cancelled once a lease is lost; Release gives the leases back.
func Own(ctx context.Context, s Settings) (*Owner, context.Context, error) {
	log := s.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	o := &Owner{
		job:    s.Job,
		holder: Self(s.Job, s.Control),
		opts:   Options{TTL: s.TTL, Logger: log, TimeoutKey: s.TimeoutKey},
		wait:   s.Wait,
		log:    log,
		cancel: cancel,
		stop:   make(chan struct{}),
	}
	if s.Lease != nil {
		o.storage, o.borrowed = s.Lease, true
		o.watch(s.Lease)
	}
	if s.Output == "" {
		return o, ctx, nil
	}
	for {
		l, err := o.acquire(ctx, filelease.New(filepath.Join(s.Output, OutputLeaseFile)), "output directory "+s.Output)
		if err == nil {
			o.output = l
			return o, ctx, nil
		}
		if waited, werr := o.Wait(ctx, err); !waited || werr != nil {
			cancel(nil)
			return nil, nil, cmp.Or(werr, err)
		}
	}
}

// acquire takes one lease and watches it.
func (o *Owner) acquire(ctx context.Context, store sdk.LeaseStore, where string) (*Lease, error) {
	opts := o.opts
	opts.Where = where
	l, err := Acquire(ctx, store, o.holder, opts)
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
	o.watch(l)
	return l, nil
}

// watch cancels the run once l is lost.
func (o *Owner) watch(l *Lease) {
	o.watchers.Add(1)
	go func() {
		defer o.watchers.Done()
		select {
		case <-l.Lost():
			o.cancel(l.Check())
		case <-o.stop:
		}
	}()
}

// Guard puts access, a new access of the job's checkpoint storage (the plugin storage, with
// checkpoint directory dir, "" for none), behind the job's ownership and returns it
// fenced (see fence). The first access it sees takes the lease on the job's record in the
// storage; later ones (after the storage plugin restarted) carry the renewals from then
// on. A storage whose checkpoints outlive its process but that keeps
// no lease record gets a lease in a file on this machine instead, with a warning; one
// whose checkpoints die with its process (jmstorage without a dir) shares nothing with
// other runners and needs none.
func (o *Owner) Guard(ctx context.Context, storage, dir string, access sdk.CheckpointStorageAccess) (sdk.CheckpointStorageAccess, error) {
	if err := o.attach(ctx, storage, dir, access); err != nil {
		return nil, err
	}
	return fence(access, o.Check), nil
}

// attach takes or carries the lease on the job's record in the checkpoint storage (Guard).
func (o *Owner) attach(ctx context.Context, storage, dir string, access sdk.CheckpointStorageAccess) error {
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
	where := fmt.Sprintf("checkpoint storage %s, job %q", storage, o.job)
	if dir != "" {
		where = fmt.Sprintf("checkpoint storage %s (%s), job %q", storage, dir, o.job)
	}
	if !isStore {
		if !access.SupportsHighlyAvailableStorage() {
			return nil
		}
		path, err := localLeasePath(storage, dir, o.job)
		if err != nil {
			return err
		}
		o.log.Warn("the checkpoint storage keeps no lease record (sdk.LeaseStore): ownership of the job is enforced on this machine only",
			"storage", storage, "lease", path)
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

// Epoch returns the epoch of the lease on the job's record in its checkpoint storage: the
// run's fencing token on the checkpoints it writes, recorded in their metadata. It is 0
// before Guard took that lease, and for a storage that needs none (its checkpoints die with
// its process). The output directory's lease counts its own epochs and is not used.
func (o *Owner) Epoch() int64 {
	o.mu.Lock()
	l := o.storage
	o.mu.Unlock()
	if l == nil {
		return 0
	}
	return l.Record().Epoch
}

// Check returns nil while every lease is valid, and the loss (an error wrapping ErrLost)
// once one is not: the fence of every commit, which the engine calls right before each.
func (o *Owner) Check() error {
	o.mu.Lock()
	ls := []*Lease{o.storage, o.output}
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

// Release releases the leases, storage first, and returns err, the run's error, or the loss
// of a lease when one was lost: the run stopped because of it.
func (o *Owner) Release(err error) error {
	close(o.stop)
	o.watchers.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	var lost error
	for _, l := range []*Lease{o.storage, o.output} {
		if l == nil {
			continue
		}
		select {
		case <-l.Lost():
			lost = cmp.Or(lost, l.Cause(ctx))
			continue
		default:
		}
		if l == o.storage && o.borrowed {
			continue
		}
		if rerr := l.Release(ctx); errors.Is(rerr, ErrLost) {
			lost = cmp.Or(lost, rerr)
		} else if rerr != nil {
			o.log.Warn("releasing a lease; the next runner waits for it to expire", "lease", l.Where(), "error", rerr)
		}
	}
	o.cancel(nil)
	if lost == nil || err == nil {
		return err
	}
	if !errors.Is(err, ErrLost) && !errors.Is(err, context.Canceled) {
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

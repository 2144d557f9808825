// Package jmstorage is Flowstate's in-memory checkpoint storage, the counterpart of Flink's
// JobManagerCheckpointStorage: checkpoint state is kept in the plugin's memory, for tests,
// development and small state.
//
// State streams become in-memory blobs with refs "jm:<job>/<chk-N|shared>/<id>" (state
// smaller than the data inline threshold, 20 KiB by default, comes back inline). A stream
// larger than max-state-size (5 MiB by default) fails with an error wrapping
// sdk.ErrStateTooLarge, as soon as a write exceeds it.
//
// Without a dir, checkpoints live only in memory, their pointers are "jm:<job>/chk-N", and
// they die with the process: SupportsHighlyAvailableStorage is false. With a dir, each
// completed checkpoint is also written to <dir>/<job>/chk-N/_metadata, and that file is
// self-contained: it carries the runner's metadata and the state blobs the checkpoint may
// reference (the blobs written through its location plus every live shared blob of the
// job, since the storage cannot read the runner's metadata). A restarted plugin resolves
// and lists those files and serves their blobs again; pointers are then the chk-N
// directories. Savepoints always go to disk, to
// <target or savepoint-dir>/savepoint-<6 chars of job id>-<12 random hex>/_metadata, with
// all their state inside.
//
// What goes to disk goes through sdk/dirstorage on the local disk, whose metadata stream
// carries the file: Flink's layout, publication of _metadata that is durable and atomic
// and never replaces one, removal of leftovers, the path checks, and with a dir the job's
// lease record in <dir>/<job>/_lease (sdk.LeaseStore, through sdk/filelease).
//
// Memory is freed by DisposeCheckpoint, DiscardState, DisposeOnFailure and by the
// reinitialization of a job (InitializeBaseLocationsForCheckpoint drops the state of its
// checkpoints that never completed).
//
// As every plugin it imports only the SDK (sdk, sdk/dirstorage, sdk/layout), never the
// runtime, another plugin, or the SDK's plugin or host end (sdk/server, sdk/host); its main
// package links sdk/server.
package jmstorage

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/dirstorage"
	"github.com/flowstate/flowstate/sdk/layout"
)

// Name is the plugin's name as users write it in the configuration.
const Name = "jmstorage"

// Version is the plugin's version.
const Version = "0.1.0"

// errs makes jmstorage's errors, "jmstorage: ...".
var errs = dirstorage.Errors(Name)

// Storage is the in-memory checkpoint storage. Configure it once, then use it from any
// number of goroutines.
type Storage struct {
	cfg config
	// disk keeps checkpoint files (with a dir) and savepoints.
	disk *dirstorage.Storage
	// epoch makes this process's refs distinct from those of earlier processes whose
	// checkpoint files it reads.
	epoch string

	mu        sync.Mutex
	seq       uint64
	blobs     map[string][]byte      // ref -> bytes of every live blob
	jobs      map[string]*jobState   // job id -> its shared blobs and pending locations
	completed map[string]*checkpoint // external pointer -> completed checkpoint or savepoint
}

var _ sdk.CheckpointStorage = (*Storage)(nil)

// jobState is what the storage keeps per job.
type jobState struct {
	shared  map[string]struct{}
	pending map[*location]struct{}
}

// checkpoint is a completed checkpoint or savepoint held in memory.
type checkpoint struct {
	job       string
	id        int64
	pointer   string
	metadata  []byte
	time      time.Time
	savepoint bool
	// owned are the refs of the blobs freed with the checkpoint.
	owned []string
}

// completedLocation returns the sdk view of c. The metadata handle is inline.
func (c *checkpoint) completedLocation() sdk.CompletedCheckpointStorageLocation {
	return sdk.CompletedCheckpointStorageLocation{
		ExternalPointer: c.pointer,
		Metadata:        sdk.StreamStateHandle{Inline: c.metadata, Size: int64(len(c.metadata)), Scope: sdk.ScopeExclusive},
		CheckpointID:    c.id,
		Time:            c.time,
	}
}

// New returns a Storage with the default options and no dir.
func New() *Storage {
	epoch, err := layout.RandomHex(4)
	if err != nil {
		epoch = fmt.Sprintf("%x", time.Now().UnixNano())
	}
	cfg, disk, _ := parseConfig(nil)
	return &Storage{
		cfg:       cfg,
		disk:      dirstorage.New(dirstorage.Local{}, disk),
		epoch:     epoch,
		blobs:     make(map[string][]byte),
		jobs:      make(map[string]*jobState),
		completed: make(map[string]*checkpoint),
	}
}

// PluginInfo implements sdk.Plugin.
func (s *Storage) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: Name, Version: Version}
}

// Configure implements sdk.Plugin. It accepts "dir", "savepoint-dir" (paths or file://
// URIs), "data-inline-threshold" (a human size, at most 1 MiB) and "max-state-size" (a
// human size, default 5 MiB); any other option is an *sdk.OptionError.
func (s *Storage) Configure(_ context.Context, opts sdk.Options) error {
	cfg, disk, err := parseConfig(opts)
	if err != nil {
		return err
	}
	s.cfg, s.disk = cfg, dirstorage.New(dirstorage.Local{}, disk)
	return nil
}

// CreateCheckpointStorage implements sdk.CheckpointStorage. The job id must be usable as a
// directory name (no path separator, no "..").
func (s *Storage) CreateCheckpointStorage(ctx context.Context, jobID string) (sdk.CheckpointStorageAccess, error) {
	if err := checkJobID(jobID); err != nil {
		return nil, err
	}
	return newAccess(ctx, s, jobID)
}

// ResolveCheckpoint implements sdk.CheckpointStorage. It accepts a "jm:<job>/chk-N" pointer
// of a checkpoint held in memory, or a chk-N or savepoint directory or its _metadata file
// (path or file:// URI) written with a dir.
func (s *Storage) ResolveCheckpoint(ctx context.Context, externalPointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	c, err := s.resolve(ctx, externalPointer)
	if err != nil {
		return sdk.CompletedCheckpointStorageLocation{}, err
	}
	return c.completedLocation(), nil
}

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/optional"
)

// faults says which calls wait and how long.
type faults struct {
	kind  string // none, slow, hang or enospc
	delay time.Duration
	every int64
	at    string // state or metadata
}

// wait delays a call of checkpoint id at site, if the faults say so.
func (f faults) wait(ctx context.Context, id int64, site string) error {
	if (f.kind != "slow" && f.kind != "hang") || site != f.at || id%f.every != 0 {
		return nil
	}
	sdk.Logger().Warn("injected storage delay", "fault", f.kind, "checkpoint", id, "at", site, "delay", f.delay)
	if f.kind == "hang" {
		time.Sleep(f.delay) // a stuck file system does not look at contexts
		return nil
	}
	select {
	case <-time.After(f.delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// storage wraps fsstorage.
type storage struct {
	inner  *fsstorage.Storage
	faults faults
}

// PluginInfo implements sdk.Plugin.
func (s *storage) PluginInfo() sdk.PluginInfo {
	return sdk.PluginInfo{Name: "faultstorage", Version: "0.1.0"}
}

// Configure implements sdk.Plugin: it takes its own options and passes the rest on.
func (s *storage) Configure(ctx context.Context, opts sdk.Options) error {
	f := faults{kind: "none", delay: 200 * time.Millisecond, every: 1, at: "state"}
	rest := sdk.Options{}
	for k, v := range opts {
		var err error
		switch k {
		case "fault":
			if v != "none" && v != "slow" && v != "hang" && v != "enospc" {
				err = fmt.Errorf("want none, slow, hang or enospc: %w", sdk.ErrInvalidArgument)
			}
			f.kind = v
		case "delay":
			f.delay, err = time.ParseDuration(v)
		case "every":
			f.every, err = strconv.ParseInt(v, 10, 64)
			if err == nil && f.every < 1 {
				err = fmt.Errorf("want at least 1: %w", sdk.ErrInvalidArgument)
			}
		case "at":
			if v != "state" && v != "metadata" {
				err = fmt.Errorf("want state or metadata: %w", sdk.ErrInvalidArgument)
			}
			f.at = v
		default:
			rest[k] = v
		}
		if err != nil {
			return &sdk.OptionError{Option: k, Value: v, Err: err}
		}
	}
	s.faults = f
	return s.inner.Configure(ctx, rest)
}

// ResolveCheckpoint implements sdk.CheckpointStorage.
func (s *storage) ResolveCheckpoint(ctx context.Context, pointer string) (sdk.CompletedCheckpointStorageLocation, error) {
	return s.inner.ResolveCheckpoint(ctx, pointer)
}

// CreateCheckpointStorage implements sdk.CheckpointStorage.
func (s *storage) CreateCheckpointStorage(ctx context.Context, jobID string) (sdk.CheckpointStorageAccess, error) {
	a, err := s.inner.CreateCheckpointStorage(ctx, jobID)
	if err != nil {
		return nil, err
	}
	w := &access{CheckpointStorageAccess: a, faults: s.faults}
	return optional.Access(w, optional.AccessInterfacesOf(w, a)), nil
}

// access delays the locations it creates. The optional interfaces of fsstorage's access
// (shared-state listing, the lease record, local files) pass through
// (optional.AccessInterfacesOf).
type access struct {
	sdk.CheckpointStorageAccess
	faults faults
}

// InitializeLocationForCheckpoint implements sdk.CheckpointStorageAccess.
func (a *access) InitializeLocationForCheckpoint(ctx context.Context, id int64) (sdk.CheckpointStorageLocation, error) {
	loc, err := a.CheckpointStorageAccess.InitializeLocationForCheckpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	return &location{CheckpointStorageLocation: loc, id: id, faults: a.faults}, nil
}

// InitializeLocationForSavepoint implements sdk.CheckpointStorageAccess: savepoints get
// the same faults as checkpoints.
func (a *access) InitializeLocationForSavepoint(ctx context.Context, id int64, target string) (sdk.CheckpointStorageLocation, error) {
	loc, err := a.CheckpointStorageAccess.InitializeLocationForSavepoint(ctx, id, target)
	if err != nil {
		return nil, err
	}
	return &location{CheckpointStorageLocation: loc, id: id, faults: a.faults}, nil
}

// location delays the streams of one checkpoint.
type location struct {
	sdk.CheckpointStorageLocation
	id     int64
	faults faults
}

// CreateCheckpointStateOutputStream implements sdk.CheckpointStreamFactory.
func (l *location) CreateCheckpointStateOutputStream(ctx context.Context, scope sdk.Scope) (sdk.CheckpointStateOutputStream, error) {
	out, err := l.CheckpointStorageLocation.CreateCheckpointStateOutputStream(ctx, scope)
	if err != nil {
		return nil, err
	}
	return &stateStream{CheckpointStateOutputStream: out, loc: l}, nil
}

// CreateMetadataOutputStream implements sdk.CheckpointStorageLocation.
func (l *location) CreateMetadataOutputStream(ctx context.Context) (sdk.MetadataOutputStream, error) {
	out, err := l.CheckpointStorageLocation.CreateMetadataOutputStream(ctx)
	if err != nil {
		return nil, err
	}
	return &metadataStream{MetadataOutputStream: out, loc: l}, nil
}

type stateStream struct {
	sdk.CheckpointStateOutputStream
	loc *location
}

// Write implements io.Writer; under fault enospc it fails as a full disk does.
func (s *stateStream) Write(p []byte) (int, error) {
	if f := s.loc.faults; f.kind == "enospc" && s.loc.id%f.every == 0 {
		return 0, fmt.Errorf("faultstorage: checkpoint %d: %w", s.loc.id,
			&os.PathError{Op: "write", Path: s.loc.LocationReference(), Err: syscall.ENOSPC})
	}
	return s.CheckpointStateOutputStream.Write(p)
}

// CloseAndGetHandle implements sdk.CheckpointStateOutputStream.
func (s *stateStream) CloseAndGetHandle(ctx context.Context) (sdk.StreamStateHandle, error) {
	if err := s.loc.faults.wait(ctx, s.loc.id, "state"); err != nil {
		s.Close()
		return sdk.StreamStateHandle{}, fmt.Errorf("faultstorage: checkpoint %d: %w", s.loc.id, err)
	}
	return s.CheckpointStateOutputStream.CloseAndGetHandle(ctx)
}

type metadataStream struct {
	sdk.MetadataOutputStream
	loc *location
}

// CloseAndFinalize implements sdk.MetadataOutputStream.
func (m *metadataStream) CloseAndFinalize(ctx context.Context) (sdk.CompletedCheckpointStorageLocation, error) {
	if err := m.loc.faults.wait(ctx, m.loc.id, "metadata"); err != nil {
		m.Close()
		return sdk.CompletedCheckpointStorageLocation{}, fmt.Errorf("faultstorage: checkpoint %d: %w", m.loc.id, err)
	}
	return m.MetadataOutputStream.CloseAndFinalize(ctx)
}

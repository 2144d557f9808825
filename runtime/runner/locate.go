package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/lease"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/filelease"
)

// ErrNoLease says that a job has no lease record where its configuration says to look.
var ErrNoLease = errors.New("no lease record")

// JobLease reads the lease record of job as its configuration places it: in the job's
// checkpoint storage (or the local lease a storage without sdk.LeaseStore gets), else in
// its output directory (cfg.Job.Output). It returns the record and where it was found, or
// an error wrapping ErrNoLease when there is none. The record says whether a runner holds
// the job (Record.Live) and its control endpoint.
func JobLease(ctx context.Context, cfg *config.Config, host *pluginhost.Host, job string) (lease.Record, string, error) {
	var stores []sdk.LeaseStore
	var wheres []string
	in, err := host.Open(ctx, cfg.CheckpointStorage)
	if err != nil {
		return lease.Record{}, "", fmt.Errorf("checkpoint storage %q: %w", cfg.CheckpointStorage, err)
	}
	if err := in.Configure(ctx, cfg.StorageOptions); err != nil {
		return lease.Record{}, "", fmt.Errorf("configure %s: %w", in.Name(), err)
	}
	storage, _ := in.CheckpointStorage()
	access, err := storage.CreateCheckpointStorage(ctx, job)
	if err != nil {
		return lease.Record{}, "", fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), job, err)
	}
	defer access.Close()
	if s, ok := access.(sdk.LeaseStore); ok {
		stores, wheres = append(stores, s), append(wheres, fmt.Sprintf("checkpoint storage %s, job %q", in.Name(), job))
	} else if access.SupportsHighlyAvailableStorage() {
		path, err := localLeasePath(in.Name(), cfg.Checkpointing.Dir, job)
		if err != nil {
			return lease.Record{}, "", err
		}
		stores, wheres = append(stores, filelease.New(path)), append(wheres, "local lease "+path)
	}
	if cfg.Job.Output != "" {
		stores = append(stores, filelease.New(filepath.Join(cfg.Job.Output, OutputLeaseFile)))
		wheres = append(wheres, "output directory "+cfg.Job.Output)
	}
	for i, s := range stores {
		r, err := s.ReadLease(ctx)
		if errors.Is(err, sdk.ErrNotFound) {
			continue
		}
		if err != nil {
			return lease.Record{}, "", fmt.Errorf("read the lease in %s: %w", wheres[i], err)
		}
		rec, err := lease.DecodeRecord(r.Data)
		if err != nil {
			return lease.Record{}, "", fmt.Errorf("the lease in %s: %w", wheres[i], err)
		}
		if rec.Job == job { // an output directory may be another job's
			return rec, wheres[i], nil
		}
	}
	return lease.Record{}, "", fmt.Errorf("job %q: %w in %v", job, ErrNoLease, wheres)
}

// ControlAddress returns the address to reach the control endpoint a lease record names:
// an endpoint bound to all interfaces (0.0.0.0, ::) is reached at the holder's host.
func ControlAddress(r lease.Record) string {
	host, port, err := net.SplitHostPort(r.Control)
	if err != nil {
		return r.Control
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return net.JoinHostPort(r.Host, port)
	}
	return r.Control
}

package ownership

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/filelease"
)

// ErrNoLease says that a job has no lease record where its configuration says to look.
var ErrNoLease = errors.New("no lease record")

// Locate reads the lease record of job where a run of it keeps one: in access, the job's
// access of its checkpoint storage (the plugin storage, with checkpoint directory dir, ""
// for none), or the local lease a storage without sdk.LeaseStore gets; else in its output
// directory output ("" for none). It returns the record and where it was found, or an
// error wrapping ErrNoLease when there is none. The record says whether a runner holds
// the job (Record.Live) and its control endpoint (ControlAddress).
func Locate(ctx context.Context, job, storage, dir string, access sdk.CheckpointStorageAccess, output string) (Record, string, error) {
	var stores []sdk.LeaseStore
	var wheres []string
	if s, ok := access.(sdk.LeaseStore); ok {
		stores, wheres = append(stores, s), append(wheres, fmt.Sprintf("checkpoint storage %s, job %q", storage, job))
	} else if access.SupportsHighlyAvailableStorage() {
		path, err := localLeasePath(storage, dir, job)
		if err != nil {
			return Record{}, "", err
		}
		stores, wheres = append(stores, filelease.New(path)), append(wheres, "local lease "+path)
	}
	if output != "" {
		stores = append(stores, filelease.New(filepath.Join(output, OutputLeaseFile)))
		wheres = append(wheres, "output directory "+output)
	}
	for i, s := range stores {
		r, err := s.ReadLease(ctx)
		if errors.Is(err, sdk.ErrNotFound) {
			continue
		}
		if err != nil {
			return Record{}, "", fmt.Errorf("read the lease in %s: %w", wheres[i], err)
		}
		rec, err := DecodeRecord(r.Data)
		if err != nil {
			return Record{}, "", fmt.Errorf("the lease in %s: %w", wheres[i], err)
		}
		if rec.Job == job { // an output directory may be another job's
			return rec, wheres[i], nil
		}
	}
	return Record{}, "", fmt.Errorf("job %q: %w in %v", job, ErrNoLease, wheres)
}

// ControlAddress returns the address to reach the control endpoint a lease record names:
// an endpoint bound to all interfaces (0.0.0.0, ::) is reached at the holder's host.
func ControlAddress(r Record) string {
	host, port, err := net.SplitHostPort(r.Control)
	if err != nil {
		return r.Control
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return net.JoinHostPort(r.Host, port)
	}
	return r.Control
}

package sdk

import "context"

// MaxLeaseSize is the largest record a LeaseStore must accept: the runner's records are a
// few hundred bytes.
const MaxLeaseSize = 64 << 10

// LeaseRecord is the content of a job's lease record and the version it was read at.
type LeaseRecord struct {
	// Data is the record's bytes exactly as the last successful WriteLease gave them. The
	// storage does not interpret them.
	Data []byte
	// Version identifies this content for a later conditional WriteLease. It is opaque to
	// the runner and never empty. It must differ between any two contents the record has
	// had; the runner never writes the same bytes twice (every record it writes carries a
	// new sequence number), so a hash of the content, such as an S3 ETag, qualifies.
	Version string
}

// LeaseStore is an optional interface of a CheckpointStorageAccess: one small record per
// job, kept beside the job's checkpoints and replaced only by compare-and-swap. The runner
// builds its job lease on it, so that two runners of one job never write the same
// checkpoints (see docs/architecture.md, "Ownership"): the running job's runner renews the
// record every few seconds, and a second runner refuses to start while the record says its
// holder is alive, or takes over by compare-and-swap once it has expired.
//
// The storage must give these guarantees to every process, on any machine, that reaches
// the same checkpoints through it:
//   - A WriteLease is atomic: a ReadLease returns the data of one successful write,
//     whole, never a mix, a prefix or an empty file.
//   - A WriteLease is linearizable against the other writes of the same record: of any
//     number of concurrent writes with the same ifVersion (or of concurrent creates), at
//     most one succeeds and the others fail with ErrConflict, and a write that succeeded
//     is seen by every ReadLease that starts after it returned.
//   - A successful write is durable once WriteLease returns.
//
// The record is never deleted: the runner marks a released lease inside the record, so
// that its fencing epoch keeps counting up across holders. DisposeCheckpoint and
// InitializeBaseLocationsForCheckpoint must leave it alone. Storages whose accesses do not
// implement LeaseStore get a lease on the runner's machine instead, which keeps two
// runners on one machine apart but not two machines (docs/plugin-authors.md).
//
// An access served by a plugin process implements it exactly when the plugin's access
// does. fsstorage keeps the record in <dir>/<job>/_lease, on S3 with conditional PUTs;
// jmstorage with a dir in the same file; sdk/filelease implements it for any directory.
type LeaseStore interface {
	// ReadLease returns the job's lease record and its version, or an error wrapping
	// ErrNotFound when the job has none yet. It works before
	// InitializeBaseLocationsForCheckpoint and for a job the storage has never seen.
	ReadLease(ctx context.Context) (LeaseRecord, error)
	// WriteLease replaces the record when its current version is ifVersion, or creates it
	// when ifVersion is "" and no record exists, and returns the new version. Otherwise
	// it writes nothing and fails with an error wrapping ErrConflict (a missing record
	// with a non-empty ifVersion is a conflict too). data is at most MaxLeaseSize bytes.
	// An error other than ErrConflict leaves the outcome unknown: the runner reads the
	// record again to learn it.
	WriteLease(ctx context.Context, data []byte, ifVersion string) (version string, err error)
}

// Package ownership makes a runner the one owner of its job. It owns the leases (Lease,
// Acquire and the renewals), the fence in front of every write to the checkpoint storage
// and every commit (Owner.Check, Owner.Guard), and the reading of a job's lease record to
// find the runner that holds it (Locate). An Owner holds one run's leases: the lease on
// the job's output directory, taken when the run starts, and the lease on the job's record
// in its checkpoint storage, taken when the first storage access is created, before
// anything in the storage is touched. When either is lost, the run's context is cancelled
// with the loss as its cause.
//
// It must never import the engine (runtime/dataflow), the plugin host
// (runtime/pluginhost), the plugin session (runtime/session), the monitor
// (runtime/monitor), the configuration (runtime/config) or the runner (runtime/runner):
// it receives a storage access, names and durations, and hands back a fence
// (Owner.Check) that the engine calls as a plain func() error.
//
// Leases: a runner holds an exclusive lease on a record (an
// sdk.LeaseStore: the job's record in its checkpoint storage, or a file in its output
// directory) and renews it while it runs; a second runner finds the record live and
// refuses to start, naming the holder; a record whose holder stopped renewing it (killed,
// frozen, cut off) is taken over once it has expired, by compare-and-swap, so of two
// contenders exactly one wins.
//
// A record whose holder is known to have ended is taken over at once, by the same
// compare-and-swap, without waiting for its expiry: Dead knows it only of a holder of this
// machine (same host name and boot id, same pid namespace) whose pid is gone, a zombie or
// another process (start time), or of this machine before a reboot. Anything else, a
// frozen holder among them, counts as alive until its record expires.
//
// Fencing: a holder commits nothing unless Check says its lease is valid. The lease is
// valid only while the last successful renewal, measured on the local monotonic clock
// from the moment that renewal was sent, is younger than the timeout minus a margin
// (Valid). A holder frozen past its timeout, or cut off from the store (a storage plugin
// that stopped answering), therefore sees its lease lapse the moment it wakes, before it
// talks to the storage; a contender takes over only after the full timeout, by its own
// wall clock, from the renewal time the holder wrote. Clocks of the two machines may
// disagree by up to the margin.
//
// A lapsed lease is not yet lost: renewals go on, and one that finds the record still at
// the version the holder last wrote makes the lease valid again, since nobody can have
// taken it over without changing the record. A renewal that finds another holder's record
// loses the lease for good: Check fails from then on and Lost is closed.
//
// Every acquisition writes the previous epoch plus one: the epoch is the holder's fencing
// token, logged and carried by LostError.
package ownership

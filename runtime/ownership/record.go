package ownership

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Holder describes the runner that holds, or held, a lease.
type Holder struct {
	// Job is the job's name.
	Job string `json:"job"`
	// Host is the holder's host name.
	Host string `json:"host"`
	// PID is the holder's process id on Host.
	PID int `json:"pid"`
	// Since is when the holder acquired the lease, by its clock.
	Since time.Time `json:"since"`
	// Control is the holder's control endpoint (host:port), "" when it has none.
	Control string `json:"control,omitempty"`
	// Instance is a random id of this acquisition: a record that carries it was written by
	// this holder and no other.
	Instance string `json:"instance"`
	// Boot is the boot id of Host's kernel (Linux: /proc/sys/kernel/random/boot_id), ""
	// where the system does not tell.
	Boot string `json:"boot,omitempty"`
	// Machine is an id of Host derived from its machine id (/etc/machine-id, which it does
	// not reveal), "" when it has none.
	Machine string `json:"machine,omitempty"`
	// PIDNamespace names the pid namespace PID is a pid of (Linux: the link
	// /proc/self/ns/pid, "pid:[4026531836]"), "" where the system does not tell.
	PIDNamespace string `json:"pid_ns,omitempty"`
	// Member is the id of the holder's runner in a group of runners that together run
	// one job (runtime/cluster), "" for a runner that runs its job alone. A runner's
	// member lease and the leases of the tasks it claims carry the same id.
	Member string `json:"member,omitempty"`
	// Start is when the holder's process started, in clock ticks after boot (Linux: field
	// 22 of /proc/PID/stat); with Boot and PIDNamespace it tells the holder's process from
	// a later one that reuses its pid. 0 where the system does not tell.
	Start uint64 `json:"start,omitempty"`
}

// String describes h for messages: job, pid, host, since and control endpoint.
func (h Holder) String() string {
	s := fmt.Sprintf("job %q (pid %d on %s, since %s", h.Job, h.PID, h.Host, h.Since.Format(time.RFC3339))
	if h.Control != "" {
		s += ", control endpoint " + h.Control
	}
	return s + ")"
}

// Record is the content of a lease record, as JSON in the store.
type Record struct {
	Holder
	// Epoch counts the acquisitions of the lease: every new holder writes the previous
	// epoch plus one. It is the holder's fencing token.
	Epoch int64 `json:"epoch"`
	// Renewed is when the holder last wrote the record, by its clock.
	Renewed time.Time `json:"renewed"`
	// TTLMillis is the holder's lease timeout: the record is live until Renewed plus it.
	TTLMillis int64 `json:"ttl_ms"`
	// Seq counts every write of the record, so that no two writes carry the same bytes.
	Seq int64 `json:"seq"`
	// Released says the holder ended cleanly: anyone may take the lease at once.
	Released bool `json:"released,omitempty"`
}

// TTL returns the holder's lease timeout.
func (r Record) TTL() time.Duration { return time.Duration(r.TTLMillis) * time.Millisecond }

// Expires returns when the record stops being live, unless renewed.
func (r Record) Expires() time.Time { return r.Renewed.Add(r.TTL()) }

// Live reports whether the record's holder may still be running at now: it has not
// released the lease and its last renewal is younger than its timeout.
func (r Record) Live(now time.Time) bool { return !r.Released && now.Before(r.Expires()) }

func (r Record) encode() []byte {
	b, _ := json.Marshal(r) // plain fields: never fails
	return b
}

// DecodeRecord parses the content of a lease record.
func DecodeRecord(data []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return Record{}, fmt.Errorf("lease record: %w", err)
	}
	if r.Instance == "" || r.Epoch < 1 {
		return Record{}, errors.New("lease record: no holder instance or epoch")
	}
	return r, nil
}

// HeldError is the answer to Acquire while another runner holds the lease.
type HeldError struct {
	// Where says where the lease lives.
	Where string
	// Record is the holder's record.
	Record Record
	// Now is when the record was judged live, by the reader's clock.
	Now time.Time
	// Alive says why the holder counts as alive (Dead's answer): "pid 7 is alive on this
	// machine", "it runs on host-b, ...".
	Alive string
	// TimeoutKey is the configuration key of the lease timeout, named in the message.
	TimeoutKey string
}

// Error names where the lease lives, its holder, when its lease expires and by which
// timeout, and why the holder counts as alive.
func (e *HeldError) Error() string {
	r := e.Record
	key := cmp.Or(e.TimeoutKey, "lease timeout")
	return fmt.Sprintf("%s is held by %s: its lease was renewed %s ago and expires in %s unless renewed (%s %s of the holder); %s",
		e.Where, r.Holder, e.Now.Sub(r.Renewed).Round(time.Millisecond), e.Left().Round(time.Millisecond), key, r.TTL(), e.Alive)
}

// Left is how long the holder's lease had left when it was judged live.
func (e *HeldError) Left() time.Duration { return e.Record.Expires().Sub(e.Now) }

// ErrLost is wrapped by every error of a lease that was lost.
var ErrLost = errors.New("lease lost")

// LostError says why a lease was lost.
type LostError struct {
	// Where says where the lease lives.
	Where string
	// Epoch is the epoch the lease was held at.
	Epoch int64
	// By is the record that replaced the lease's, when a write found one; nil when the
	// lease lapsed without a renewal.
	By *Record
	// Unrenewed is how long the lease went without a successful renewal, when it lapsed.
	Unrenewed time.Duration
	// Valid is how long a renewal keeps the lease valid for its holder.
	Valid time.Duration
}

// Error says where, at which epoch, why, and to whom when known.
func (e *LostError) Error() string {
	s := fmt.Sprintf("lost the lease of %s (epoch %d)", e.Where, e.Epoch)
	if e.Unrenewed > 0 {
		s += fmt.Sprintf(": not renewed for %s, and a renewal is valid for %s", e.Unrenewed.Round(time.Millisecond), e.Valid.Round(time.Millisecond))
	}
	switch {
	case e.By == nil:
		return s + " (another runner may have taken over)"
	case e.By.Released || e.By.Instance == "":
		return s + ": the record was replaced"
	}
	return s + fmt.Sprintf(": now held by %s, epoch %d", e.By.Holder, e.By.Epoch)
}

// Is makes errors.Is(err, ErrLost) true.
func (e *LostError) Is(target error) bool { return target == ErrLost }

package ownership

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// deadPIDs judges the holders with the pids in dead ended on this machine, and any other
// alive.
func deadPIDs(dead ...int) func(Holder, time.Time) (bool, string) {
	return func(h Holder, _ time.Time) (bool, string) {
		for _, pid := range dead {
			if h.PID == pid {
				return true, "pid is gone"
			}
		}
		return false, "pid is alive on this machine"
	}
}

// TestDeadHolderIsTakenOverAtOnce: a live record whose holder is known dead is taken
// over without waiting for its expiry, at the next epoch; the old holder's fence fails
// as soon as it checks after a renewal, and the new one says why it took over.
func TestDeadHolderIsTakenOverAtOnce(t *testing.T) { synctest.Test(t, deadHolderIsTakenOverAtOnce) }

func deadHolderIsTakenOverAtOnce(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	a := acquire(t, s, c, 11)
	waitWrite(t, s)
	waitArmed(t, c)
	c.Freeze()
	c.Advance(time.Second) // the record is live for 29 s more
	b, err := Acquire(context.Background(), s, holder("wc", 22), Options{TTL: ttl, Where: "w", Clock: c, dead: deadPIDs(11)})
	if err != nil {
		t.Fatalf("Acquire over a dead holder's live record: %v", err)
	}
	t.Cleanup(func() { b.Release(context.Background()) })
	waitWrite(t, s)
	if r := s.record(); r.PID != 22 || r.Epoch != 2 {
		t.Fatalf("record after the takeover = %+v; want pid 22 at epoch 2", r)
	}
	prev, dead, ok := b.TookOver()
	if !ok || prev.PID != 11 || dead != "pid is gone" {
		t.Fatalf("TookOver = %+v, %q, %v; want pid 11's record, dead because its pid is gone", prev, dead, ok)
	}
	c.Thaw()
	c.Advance(RenewEvery(ttl)) // the old holder's renewal finds pid 22's record
	waitLost(t, a, "the old holder did not lose its lease to the takeover")
	if err := a.Check(); !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "epoch 2") {
		t.Fatalf("old holder's Check = %v; want ErrLost naming epoch 2", err)
	}
}

// TestLiveHolderRefusalNamesTheTimeout: a live holder's lease is refused, naming the
// timeout's key and value, when it expires, and why the holder counts as alive.
func TestLiveHolderRefusalNamesTheTimeout(t *testing.T) {
	synctest.Test(t, liveHolderRefusalNamesTheTimeout)
}

func liveHolderRefusalNamesTheTimeout(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	acquire(t, s, c, 11)
	waitWrite(t, s)
	c.Freeze()
	c.Advance(7 * time.Second)
	_, err := Acquire(context.Background(), s, holder("wc", 22), Options{TTL: ttl, Where: "w", Clock: c, TimeoutKey: "job.lease.timeout", dead: deadPIDs(99)})
	var held *HeldError
	if !errors.As(err, &held) || held.Left() != 23*time.Second {
		t.Fatalf("Acquire = %v; want a *HeldError with 23s left", err)
	}
	for _, want := range []string{"expires in 23s unless renewed (job.lease.timeout 30s of the holder)", "pid is alive on this machine"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
}

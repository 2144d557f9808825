package ownership

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

const ttl = 30 * time.Second

func holder(job string, pid int) Holder {
	return Holder{Job: job, Host: "host-a", PID: pid, Control: "127.0.0.1:4100"}
}

func acquire(t *testing.T, s *memStore, c *fakeClock, pid int) *Lease {
	t.Helper()
	l, err := Acquire(context.Background(), s, holder("wc", pid), Options{TTL: ttl, Where: "the test store", Clock: c})
	if err != nil {
		t.Fatalf("Acquire by pid %d: %v", pid, err)
	}
	t.Cleanup(func() { l.Release(context.Background()) })
	return l
}

// The tests run in synctest bubbles, on a fakeClock: the waits below let every goroutine
// of the bubble run until it blocks (synctest.Wait), and then look at what happened, with
// no time passing meanwhile.

// waitWrite fails the test unless the store took a write that no waitWrite counted yet.
func waitWrite(t *testing.T, s *memStore) {
	t.Helper()
	synctest.Wait()
	select {
	case <-s.writes:
	default:
		t.Fatal("no write to the lease store")
	}
}

// waitLost fails the test with why unless l is lost.
func waitLost(t *testing.T, l *Lease, why string) {
	t.Helper()
	synctest.Wait()
	select {
	case <-l.Lost():
	default:
		t.Fatal(why)
	}
}

// waitArmed fails the test unless the renewal loop set a timer that no waitArmed counted
// yet.
func waitArmed(t *testing.T, c *fakeClock) {
	t.Helper()
	synctest.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == c.armed {
		t.Fatal("the renewal loop set no timer")
	}
	c.seen++
}

func TestAcquireCreatesTheRecord(t *testing.T) { synctest.Test(t, acquireCreatesTheRecord) }

func acquireCreatesTheRecord(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	l := acquire(t, s, c, 11)
	waitWrite(t, s)
	r := s.record()
	if r.Epoch != 1 || r.PID != 11 || r.Host != "host-a" || r.Control != "127.0.0.1:4100" || r.Job != "wc" || r.Released {
		t.Fatalf("record = %+v; want epoch 1 of pid 11 on host-a with its control address", r)
	}
	if !r.Since.Equal(c.Now()) || !r.Renewed.Equal(c.Now()) || r.TTL() != ttl || r.Instance == "" {
		t.Fatalf("record = %+v; want since and renewed now, ttl %s and an instance", r, ttl)
	}
	if err := l.Check(); err != nil {
		t.Fatalf("Check of a fresh lease: %v", err)
	}
	if l.Record() != r {
		t.Fatalf("Record() = %+v; the store holds %+v", l.Record(), r)
	}
}

func TestLiveLeaseIsRefused(t *testing.T) { synctest.Test(t, liveLeaseIsRefused) }

func liveLeaseIsRefused(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	acquire(t, s, c, 11)
	waitWrite(t, s)
	c.Freeze()                   // the holder renews nothing meanwhile
	c.Advance(ttl - time.Second) // still live
	before := s.record()
	_, err := Acquire(context.Background(), s, holder("wc", 22), Options{TTL: ttl, Where: "checkpoint storage x, job \"wc\"", Clock: c})
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("second Acquire = %v; want a *HeldError", err)
	}
	for _, want := range []string{`checkpoint storage x, job "wc"`, "pid 11", "host-a", "127.0.0.1:4100", before.Since.Format(time.RFC3339), "expires in 1s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	if s.record() != before {
		t.Fatalf("a refused Acquire changed the record: %+v -> %+v", before, s.record())
	}
}

func TestExpiredLeaseIsTakenOver(t *testing.T) { synctest.Test(t, expiredLeaseIsTakenOver) }

func expiredLeaseIsTakenOver(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	a := acquire(t, s, c, 11)
	waitWrite(t, s)
	waitArmed(t, c)
	c.Freeze() // the holder stops renewing: killed, or frozen
	c.Advance(ttl)
	b := acquire(t, s, c, 22)
	waitWrite(t, s)
	if r := s.record(); r.PID != 22 || r.Epoch != 2 {
		t.Fatalf("after the takeover the record is %+v; want pid 22 at epoch 2", r)
	}
	if err := b.Check(); err != nil {
		t.Fatalf("new holder's Check: %v", err)
	}
	if err := a.Check(); !errors.Is(err, ErrLost) {
		t.Fatalf("old holder's Check after its lease expired = %v; want ErrLost", err)
	}
	if err := a.Cause(context.Background()); !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "now held by") || !strings.Contains(err.Error(), "pid 22") {
		t.Fatalf("old holder's Cause = %v; want ErrLost naming pid 22", err)
	}
	if prev, dead, ok := b.TookOver(); !ok || prev.PID != 11 || dead != "" {
		t.Fatalf("new holder's TookOver = %+v, %q, %v; want pid 11's expired record", prev, dead, ok)
	}
}

func TestRenewalKeepsTheLease(t *testing.T) { synctest.Test(t, renewalKeepsTheLease) }

func renewalKeepsTheLease(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	l := acquire(t, s, c, 11)
	waitWrite(t, s)
	for i := 1; i <= 9; i++ { // three timeouts
		waitArmed(t, c)
		c.Advance(RenewEvery(ttl))
		waitWrite(t, s)
		r := s.record()
		if r.Seq != int64(i+1) || !r.Renewed.Equal(c.Now()) || r.Epoch != 1 {
			t.Fatalf("renewal %d wrote %+v; want seq %d renewed now at epoch 1", i, r, i+1)
		}
		if err := l.Check(); err != nil {
			t.Fatalf("Check after renewal %d: %v", i, err)
		}
	}
	if _, err := Acquire(context.Background(), s, holder("wc", 22), Options{TTL: ttl, Where: "w", Clock: c}); !errors.As(err, new(*HeldError)) {
		t.Fatalf("Acquire of a renewed lease = %v; want a *HeldError", err)
	}
}

// TestFrozenHolderIsFenced: a holder whose process stopped for longer than the lease's
// validity sees the lease lapse the moment it checks, before it talks to the storage. When
// it wakes and nobody took the lease over, its next renewal finds the record at the version
// it last wrote and makes the lease valid again.
func TestFrozenHolderIsFenced(t *testing.T) { synctest.Test(t, frozenHolderIsFenced) }

func frozenHolderIsFenced(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	l := acquire(t, s, c, 11)
	waitWrite(t, s)
	waitArmed(t, c)
	c.Freeze()
	calls := s.callCount()
	c.Advance(Valid(ttl) - time.Millisecond)
	if err := l.Check(); err != nil {
		t.Fatalf("Check just inside the validity: %v", err)
	}
	c.Advance(time.Millisecond)
	err := l.Check()
	if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "not renewed for") {
		t.Fatalf("Check after a freeze of the validity = %v; want ErrLost, not renewed", err)
	}
	if n := s.callCount(); n != calls {
		t.Fatalf("Check reached the store (%d calls, %d before)", n, calls)
	}
	select {
	case <-l.Lost():
		t.Fatal("Lost() closed by a lapse: nobody took the lease over")
	default:
	}
	c.Thaw() // the loop wakes up and renews at the version it last wrote
	waitWrite(t, s)
	waitArmed(t, c) // the renewal is booked: the loop set its next timer
	if err := l.Check(); err != nil {
		t.Fatalf("Check after the renewal that followed the freeze: %v", err)
	}
	if r := s.record(); r.PID != 11 || r.Epoch != 1 {
		t.Fatalf("record %+v; want pid 11's, epoch 1", r)
	}
}

// TestFrozenHolderTakenOver: while the holder was frozen past its lease, another runner
// took the lease over. Woken, the holder's lease stays lapsed until its renewal finds the
// other record; then it is lost for good, naming the new holder, and the holder never
// overwrites the record.
func TestFrozenHolderTakenOver(t *testing.T) { synctest.Test(t, frozenHolderTakenOver) }

func frozenHolderTakenOver(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	l := acquire(t, s, c, 11)
	waitWrite(t, s)
	waitArmed(t, c)
	c.Freeze()
	c.Advance(ttl + time.Millisecond)
	if err := l.Check(); !errors.Is(err, ErrLost) {
		t.Fatalf("Check of a frozen holder past its timeout = %v; want ErrLost", err)
	}
	other, err := Acquire(context.Background(), s, holder("wc", 22), Options{TTL: ttl, Where: "w", Clock: c})
	if err != nil {
		t.Fatalf("a contender could not take over the expired lease: %v", err)
	}
	defer other.Release(context.Background())
	waitWrite(t, s)
	c.Thaw()
	waitLost(t, l, "the woken holder's lease was not lost to the new holder")
	if err := l.Check(); !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "pid 22") {
		t.Fatalf("Check = %v; want ErrLost naming pid 22", err)
	}
	if r := s.record(); r.PID != 22 || r.Epoch != 2 {
		t.Fatalf("record %+v; want pid 22's, epoch 2", r)
	}
}

// TestConflictLosesTheLease: a renewal that finds another holder's record loses the lease,
// naming the new holder.
func TestConflictLosesTheLease(t *testing.T) { synctest.Test(t, conflictLosesTheLease) }

func conflictLosesTheLease(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	l := acquire(t, s, c, 11)
	waitWrite(t, s)
	waitArmed(t, c)
	// Another runner whose clock runs ahead took over.
	cur, _ := s.ReadLease(context.Background())
	other := Record{Holder: Holder{Job: "wc", Host: "host-b", PID: 22, Instance: "b", Control: "10.0.0.2:4200"}, Epoch: 2, Renewed: c.Now(), TTLMillis: ttl.Milliseconds(), Seq: 5}
	if _, err := s.WriteLease(context.Background(), other.encode(), cur.Version); err != nil {
		t.Fatal(err)
	}
	waitWrite(t, s)
	c.Advance(RenewEvery(ttl))
	waitLost(t, l, "the lease was not lost after a conflicting renewal")
	err := l.Check()
	if !errors.Is(err, ErrLost) || !strings.Contains(err.Error(), "pid 22 on host-b") || !strings.Contains(err.Error(), "10.0.0.2:4200") {
		t.Fatalf("Check = %v; want ErrLost naming pid 22 on host-b and its control endpoint", err)
	}
	if r := s.record(); r.PID != 22 {
		t.Fatalf("the losing renewal overwrote the record: %+v", r)
	}
}

// TestConcurrentTakeover races two contenders for an expired lease, and for a live lease
// of a holder known dead, many times: exactly one wins each time, at the next epoch, and
// the other is refused, naming the winner.
func TestConcurrentTakeover(t *testing.T) {
	for _, live := range []bool{false, true} {
		t.Run(map[bool]string{false: "expired", true: "dead holder"}[live], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { concurrentTakeover(t, live) })
		})
	}
}

// concurrentTakeover races two contenders for pid 1's record, 50 times: expired, or live
// and of a holder known dead.
func concurrentTakeover(t *testing.T, live bool) {
	for round := range 50 {
		s, c := newMemStore(), newFakeClock()
		renewed := c.Now().Add(-ttl)
		if live {
			renewed = c.Now()
		}
		stale := Record{Holder: Holder{Job: "wc", Host: "gone", PID: 1, Instance: "dead"}, Epoch: 7, Renewed: renewed, TTLMillis: ttl.Milliseconds(), Seq: 40}
		if _, err := s.WriteLease(context.Background(), stale.encode(), ""); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		leases, errs := make([]*Lease, 2), make([]error, 2)
		start := make(chan struct{})
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				leases[i], errs[i] = Acquire(context.Background(), s, holder("wc", 100+i), Options{TTL: ttl, Where: "w", Clock: c, dead: deadPIDs(1)})
			}()
		}
		close(start)
		wg.Wait()
		won := -1
		for i := range 2 {
			if errs[i] == nil {
				if won >= 0 {
					t.Fatalf("round %d: both contenders acquired the lease", round)
				}
				won = i
				t.Cleanup(func() { leases[i].Release(context.Background()) })
			}
		}
		if won < 0 {
			t.Fatalf("round %d: neither contender acquired the lease: %v; %v", round, errs[0], errs[1])
		}
		var held *HeldError
		if loser := errs[1-won]; !errors.As(loser, &held) || held.Record.PID != 100+won {
			t.Fatalf("round %d: the loser got %v; want a *HeldError naming pid %d", round, loser, 100+won)
		}
		if r := s.record(); r.Epoch != 8 || r.PID != 100+won {
			t.Fatalf("round %d: record %+v; want the winner at epoch 8", round, r)
		}
	}
}

// TestReleaseFreesTheLease: a released lease is taken at once, with the next epoch, and
// the releasing holder's Check fails from then on.
func TestReleaseFreesTheLease(t *testing.T) { synctest.Test(t, releaseFreesTheLease) }

func releaseFreesTheLease(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	l := acquire(t, s, c, 11)
	waitWrite(t, s)
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release: %v", err)
	}
	waitWrite(t, s)
	if r := s.record(); !r.Released || r.Epoch != 1 {
		t.Fatalf("after Release the record is %+v; want released at epoch 1", r)
	}
	if err := l.Check(); !errors.Is(err, ErrLost) {
		t.Fatalf("Check after Release = %v; want ErrLost", err)
	}
	b := acquire(t, s, c, 22)
	if r := b.Record(); r.Epoch != 2 || r.PID != 22 {
		t.Fatalf("next holder's record %+v; want pid 22 at epoch 2", r)
	}
}

// TestLostAnswers: writes that went through but whose answers were lost (a storage plugin
// that died, a timeout) neither fail the acquisition nor lose the lease.
func TestLostAnswers(t *testing.T) { synctest.Test(t, lostAnswers) }

func lostAnswers(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	s.lostAnswers = 1
	l := acquire(t, s, c, 11)
	waitWrite(t, s)
	s.mu.Lock()
	s.lostAnswers = 1
	s.mu.Unlock()
	waitArmed(t, c)
	c.Advance(RenewEvery(ttl)) // applied, answered with an error
	waitWrite(t, s)
	waitArmed(t, c)
	c.Advance(ttl / 10) // retried at a stale version: conflicts with its own record
	waitWrite(t, s)
	if err := l.Check(); err != nil {
		t.Fatalf("Check after a renewal whose answer was lost: %v", err)
	}
	if r := s.record(); r.PID != 11 || r.Seq != 3 {
		t.Fatalf("record %+v; want pid 11's third write", r)
	}
}

// TestFailingRenewals: renewals that fail keep being retried; the lease stays valid until
// its validity runs out, then it lapses (without being lost: nobody took it over) and is
// retried every tenth of the timeout still (not at once, over and over), and the first
// renewal that goes through again makes it valid.
func TestFailingRenewals(t *testing.T) { synctest.Test(t, failingRenewals) }

func failingRenewals(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	l := acquire(t, s, c, 11)
	waitWrite(t, s)
	s.mu.Lock()
	s.failWrites = 1 << 30
	s.mu.Unlock()
	waitArmed(t, c)
	c.Advance(RenewEvery(ttl)) // the first renewal fails
	elapsed := RenewEvery(ttl)
	for ; elapsed < Valid(ttl); elapsed += ttl / 10 {
		waitArmed(t, c) // a retry
		if err := l.Check(); err != nil {
			t.Fatalf("Check %s after the last renewal, inside the validity: %v", elapsed, err)
		}
		c.Advance(ttl / 10)
	}
	waitArmed(t, c)
	if err := l.Check(); err == nil || !strings.Contains(err.Error(), "not renewed for") {
		t.Fatalf("Check %s after the last renewal = %v; want not renewed", elapsed, err)
	}
	select {
	case <-l.Lost():
		t.Fatal("failed renewals lost the lease; it only lapsed")
	default:
	}
	for range 3 { // lapsed: a retry every tenth of the timeout
		if next, ok := c.nextTimer(); !ok || next != ttl/10 {
			t.Fatalf("the lapsed lease's next renewal is due in %s (pending: %v); want %s", next, ok, ttl/10)
		}
		c.Advance(ttl / 10)
		waitArmed(t, c)
	}
	s.mu.Lock()
	s.failWrites = 0
	s.mu.Unlock()
	c.Advance(ttl / 10)
	waitWrite(t, s)
	waitArmed(t, c) // the renewal is booked: the loop set its next timer
	if err := l.Check(); err != nil {
		t.Fatalf("Check after a renewal went through again: %v", err)
	}
}

// TestSetStore: after SetStore the renewals go through the new store, as they must through
// a new access once the storage plugin restarted and the old access died with it.
func TestSetStore(t *testing.T) { synctest.Test(t, setStore) }

func setStore(t *testing.T) {
	s, c := newMemStore(), newFakeClock()
	old := &dyingStore{memStore: s}
	l, err := Acquire(context.Background(), old, holder("wc", 11), Options{TTL: ttl, Where: "w", Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	waitWrite(t, s)
	old.dead.Store(true)
	l.SetStore(s)
	waitArmed(t, c)
	c.Advance(RenewEvery(ttl))
	waitWrite(t, s)
	if err := l.Check(); err != nil {
		t.Fatalf("Check after renewing through the new store: %v", err)
	}
}

func TestAcquireRefusesABadTimeout(t *testing.T) {
	if _, err := Acquire(context.Background(), newMemStore(), holder("wc", 1), Options{TTL: 0, Where: "w"}); err == nil {
		t.Fatal("Acquire with a zero timeout succeeded")
	}
}

package prio

import (
	"sync"
	"testing"
	"time"
)

// waitFor polls cond until it holds or a few seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestUrgentGoesBeforeQueuedLocks(t *testing.T) {
	// Both orders of arrival: the outcome must not depend on which waiter came first.
	for _, readerFirst := range []bool{true, false} {
		var m Mutex
		var order []string
		var orderMu sync.Mutex
		record := func(s string) {
			orderMu.Lock()
			order = append(order, s)
			orderMu.Unlock()
		}
		m.Lock() // the running write
		var wg sync.WaitGroup
		write := func() {
			wg.Add(1)
			go func() { // a queued write
				defer wg.Done()
				m.Lock()
				record("write")
				m.Unlock()
			}()
			time.Sleep(10 * time.Millisecond) // let it reach the wait
		}
		if !readerFirst {
			write()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.LockUrgent()
			record("read")
			m.Unlock()
		}()
		waitFor(t, "the urgent waiter", func() bool { return m.UrgentWaiting() == 1 })
		if readerFirst {
			write()
		}
		m.Unlock()
		wg.Wait()
		if len(order) != 2 || order[0] != "read" {
			t.Fatalf("reader first %v: order %v, want the read first", readerFirst, order)
		}
	}
}

func TestExclusive(t *testing.T) {
	var m Mutex
	var inside, most int
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(urgent bool) {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				if urgent {
					m.LockUrgent()
				} else {
					m.Lock()
				}
				inside++
				most = max(most, inside)
				inside--
				m.Unlock()
			}
		}(i%2 == 0)
	}
	wg.Wait()
	if most != 1 {
		t.Fatalf("%d goroutines held the lock at once", most)
	}
}

func TestUnlockOfUnlockedPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Unlock of an unlocked Mutex did not panic")
		}
	}()
	var m Mutex
	m.Unlock()
}

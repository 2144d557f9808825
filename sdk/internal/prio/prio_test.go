package prio

import (
	"sync"
	"testing"
)

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
		write := func() { // a queued write
			wg.Go(func() {
				m.Lock()
				record("write")
				m.Unlock()
			})
		}
		read := func() {
			wg.Go(func() {
				m.LockUrgent()
				record("read")
				m.Unlock()
			})
		}
		if readerFirst {
			read()
			m.AwaitWaiters(1, 0)
			write()
		} else {
			write()
			m.AwaitWaiters(0, 1)
			read()
		}
		m.AwaitWaiters(1, 1)
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
		urgent := i%2 == 0
		wg.Go(func() {
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
		})
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

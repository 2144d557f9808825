package dataflow

import (
	"sync"
	"time"
)

// watchdog calls fire(1), fire(2), ... every interval from start until stop: the
// cancellation watchdog of an attempt's teardown. A zero interval or nil fire disables it.
type watchdog struct {
	every time.Duration
	fire  func(n int)

	done chan struct{}
	wg   sync.WaitGroup
}

func (w *watchdog) start() {
	if w.every <= 0 || w.fire == nil {
		return
	}
	w.done = make(chan struct{})
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		ticker := time.NewTicker(w.every) // on the fake clock of a testing/synctest bubble in tests
		defer ticker.Stop()
		for n := 1; ; n++ {
			select {
			case <-ticker.C:
				w.fire(n)
			case <-w.done:
				return
			}
		}
	}()
}

// stop ends the watchdog and waits for a fire in progress. Call it once.
func (w *watchdog) stop() {
	if w.done != nil {
		close(w.done)
		w.wg.Wait()
	}
}

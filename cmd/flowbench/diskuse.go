package main

import (
	"io/fs"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// diskWatch samples the disk space a directory's files take, as du counts it (allocated
// blocks), and keeps the largest sample.
type diskWatch struct {
	stop chan struct{}
	done sync.WaitGroup
	peak int64
}

// watchDisk samples dir every interval, from now until Stop.
func watchDisk(dir string, every time.Duration) *diskWatch {
	w := &diskWatch{stop: make(chan struct{})}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			w.peak = max(w.peak, diskUse(dir))
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// Stop ends the sampling and returns the largest sample.
func (w *diskWatch) Stop() int64 {
	close(w.stop)
	w.done.Wait()
	return w.peak
}

// diskUse returns the bytes of disk the files below dir take (st_blocks of each, counted
// once); files that vanish while it walks count for nothing.
func diskUse(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}

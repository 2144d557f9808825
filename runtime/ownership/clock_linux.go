package ownership

import (
	"time"

	"golang.org/x/sys/unix"
)

// elapsed reads CLOCK_BOOTTIME, which counts the time the machine was suspended too; on a
// kernel without it (before 2.6.39), Go's monotonic clock.
var elapsed = func() func() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		start := time.Now()
		return func() time.Duration { return time.Since(start) }
	}
	return func() time.Duration {
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
		return time.Duration(ts.Nano())
	}
}()

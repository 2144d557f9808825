//go:build !linux

package ownership

import "time"

// processStart anchors elapsed.
var processStart = time.Now()

// elapsed reads Go's monotonic clock.
func elapsed() time.Duration { return time.Since(processStart) }

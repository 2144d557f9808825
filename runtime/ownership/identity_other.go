//go:build !linux

package ownership

import (
	"errors"
	"os"
)

// readSelf knows only the host name and pid off Linux: no boot id, pid namespace or start
// time, so no holder is ever known dead here (Dead), and a dead runner's lease is taken
// over once it expires.
func readSelf() identity {
	host, _ := os.Hostname()
	return identity{host: host, pid: os.Getpid()}
}

// probe is never reached off Linux: judge stops at the missing boot id.
func probe(int) (proc, error) { return proc{}, errors.ErrUnsupported }

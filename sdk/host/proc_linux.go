//go:build linux

package host

import "syscall"

// sysProcAttr makes the kernel kill the plugin when the runner dies, even by SIGKILL.
// The signal fires when the thread that started the child exits; Go only ends a thread
// when a goroutine locked to it exits, which this package never does, and sdk.Serve
// watches its parent as a second guard.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

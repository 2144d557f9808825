//go:build linux

package host

import (
	"os"
	"syscall"
)

// sysProcAttr makes the kernel kill the plugin when the runner dies, even by SIGKILL.
// The signal fires when the thread that started the child exits; Go only ends a thread
// when a goroutine locked to it exits, which this package never does, and server.Serve
// watches its parent as a second guard.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// fdExecPath names the plugin binary's open file in the child: binary.command passes it
// as the child's first extra file, descriptor 3. Executing it runs exactly the file that
// was checked, as fexecve does. The kernel names the process after the descriptor ("3");
// server.Serve renames it after its binary, and its command line and /proc/PID/exe show the
// binary's path.
const fdExecPath = "/proc/self/fd/3"

// execPath returns the path that executes the child's descriptor 3, when /proc is there.
func execPath() (string, bool) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		return "", false
	}
	return fdExecPath, true
}

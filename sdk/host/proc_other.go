//go:build !linux

package host

import "syscall"

// sysProcAttr: no parent-death signal off Linux; server.Serve watches its parent instead.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// execPath: off Linux the binary is executed by its path, after the checks.
func execPath() (string, bool) { return "", false }

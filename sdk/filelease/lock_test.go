package filelease_test

import (
	"os"
	"syscall"
	"testing"
)

// holdLock takes an exclusive flock of name through its own open file, as another process
// would, and returns its release.
func holdLock(t *testing.T, name string) (unlock func()) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return func() { f.Close() }
}

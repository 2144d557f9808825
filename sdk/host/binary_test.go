package host

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecutesTheCheckedFile swaps the binary for another file between the check and the
// start: the process runs the file that was checked, not the one now at the path.
func TestExecutesTheCheckedFile(t *testing.T) {
	if _, ok := execPath(); !ok {
		t.Skip("no /proc: binaries are executed by path here")
	}
	orig, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Skip("no /bin/sleep to execute")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "flowstate-plugin-x")
	if err := os.WriteFile(path, orig, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(orig)
	b, err := openBinary(path, hex.EncodeToString(sum[:]))
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	var checked syscall.Stat_t
	if err := syscall.Fstat(int(b.f.Fd()), &checked); err != nil {
		t.Fatal(err)
	}
	// The swap: another file renamed over the path after the check.
	swapped := filepath.Join(dir, "swapped")
	if err := os.WriteFile(swapped, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(swapped, path); err != nil {
		t.Fatal(err)
	}
	cmd := b.command()
	cmd.Args = append(cmd.Args, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var ran syscall.Stat_t
	if err := syscall.Stat("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/exe", &ran); err != nil {
		t.Fatal(err)
	}
	if ran.Ino != checked.Ino || ran.Dev != checked.Dev {
		t.Fatalf("the process runs inode %d, the checked file is inode %d", ran.Ino, checked.Ino)
	}
	// Start returns once execve has closed the child's close-on-exec descriptors, which is
	// before the kernel has set up the new program's arguments: until then cmdline reads
	// empty. Wait for them; no event tells, so look until they are there.
	var cmdline []byte
	for deadline := time.Now().Add(10 * time.Second); len(cmdline) == 0 && time.Now().Before(deadline); {
		cmdline, _ = os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cmdline")
		if len(cmdline) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	if !strings.HasPrefix(string(cmdline), path+"\x00") {
		t.Errorf("command line %q does not start with the binary's path", cmdline)
	}
}

// TestChecksumReadsTheOpenFile: a pin that does not match the opened file is refused with
// both hashes, before anything runs.
func TestChecksumReadsTheOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flowstate-plugin-x")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	wrong := strings.Repeat("0", 64)
	_, err := openBinary(path, wrong)
	if !errors.Is(err, ErrChecksumMismatch) || !strings.Contains(err.Error(), wrong) || !strings.Contains(err.Error(), path) {
		t.Fatalf("openBinary with a wrong pin: %v", err)
	}
}

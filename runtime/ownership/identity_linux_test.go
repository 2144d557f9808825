package ownership

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSelfIsAlive: this process's own holder record carries its boot id, pid namespace and
// start time, and Dead finds it alive.
func TestSelfIsAlive(t *testing.T) {
	h := Self("wc", "127.0.0.1:1")
	if h.PID != os.Getpid() || h.Boot == "" || h.PIDNamespace == "" || h.Start == 0 {
		t.Fatalf("Self() = %+v; want this pid with its boot id, pid namespace and start time", h)
	}
	if dead, why := Dead(h, time.Now()); dead {
		t.Fatalf("Dead(this process) = true: %s", why)
	}
	// The same pid with another start time is another process.
	h.Start++
	if dead, _ := Dead(h, time.Now()); !dead {
		t.Fatal("Dead(this pid with another start time) = false; want true: the pid was reused")
	}
}

// TestExitedChildIsDead: a running child process is alive; killed, it is dead while a
// zombie and once reaped, by its real pid and start time.
func TestExitedChildIsDead(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	_, start, _, err := readStat(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	h := Self("wc", "")
	h.PID, h.Start = pid, start
	if dead, why := Dead(h, time.Now()); dead {
		cmd.Process.Kill()
		t.Fatalf("Dead(a running child) = true: %s", why)
	}
	cmd.Process.Kill()
	// Wait for the child's exit without reaping it (WNOWAIT): from then on it is a zombie.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EINTR) {
			t.Fatalf("waitid for the killed child: %v", err)
		}
	}
	if _, _, state, err := readStat(fmt.Sprintf("/proc/%d/stat", pid)); err != nil || state != 'Z' {
		t.Fatalf("the killed child, exited and not reaped, is in state %q (%v); want a zombie", state, err)
	}
	if dead, why := Dead(h, time.Now()); !dead || !strings.Contains(why, "has exited") {
		t.Fatalf("Dead(a killed child not yet reaped) = %v, %q; want true: it has exited", dead, why)
	}
	cmd.Wait()
	dead, why := Dead(h, time.Now())
	if !dead || !strings.Contains(why, "is gone") {
		t.Fatalf("Dead(a child killed and reaped) = %v, %q; want true: it is gone", dead, why)
	}
}

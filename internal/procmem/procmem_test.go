package procmem

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testwait"
)

// childEnv makes the test binary a child that holds childBytes resident, having used at
// least childCPU of CPU time, until its stdin closes.
const childEnv = "PROCMEM_TEST_CHILD"

const (
	childBytes = 64 << 20
	childCPU   = 100 * time.Millisecond
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		b := make([]byte, childBytes)
		for i := range b {
			b[i] = byte(i)
		}
		for selfCPU() < childCPU {
			for i := range b[:1<<20] {
				b[i]++
			}
		}
		os.Stdout.WriteString("ready\n")
		bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes stdin
		os.Stdout.WriteString(string(b[len(b)-1:]))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// selfCPU is the user and system time of this process so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestWatchSeesAChildsPeak starts a child of the test process that touches 64 MiB, uses
// 100 ms of CPU and waits: a watcher of the test process reports the child, by its
// executable's name, with a peak of at least 64 MiB and at least 100 ms of CPU time (at
// most what the child used in all, as wait4 reports it), and keeps them once the child has
// exited.
func TestWatchSeesAChildsPeak(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := Watch(os.Getpid(), 10*time.Millisecond)
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("child said %q, %v", line, err)
	}
	// Wait for a sample taken after the child was ready.
	name := filepath.Base(os.Args[0])
	testwait.For(t, fmt.Sprintf("a sample of the child %d with %d bytes", cmd.Process.Pid, childBytes), 30*time.Second, func() error {
		w.mu.Lock()
		p := w.peaks[cmd.Process.Pid]
		w.mu.Unlock()
		if p.Bytes < childBytes || p.CPU < childCPU {
			return fmt.Errorf("peak %+v", p)
		}
		return nil
	})
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	peaks := w.Stop()
	var child *Peak
	for i, p := range peaks {
		if p.PID == cmd.Process.Pid {
			child = &peaks[i]
		}
	}
	if child == nil || child.Name != name || child.Bytes < childBytes {
		t.Fatalf("peaks %+v: want pid %d named %s with at least %d bytes", peaks, cmd.Process.Pid, name, childBytes)
	}
	if total := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(); child.CPU < childCPU || child.CPU > total {
		t.Fatalf("child's CPU time sampled %s: want at least %s and at most the %s it used in all", child.CPU, childCPU, total)
	}
	if n, ok := Max(peaks, name); !ok || n < childBytes {
		t.Fatalf("Max(%s) = %d, %v", name, n, ok)
	}
	if _, ok := Max(peaks, "no-such-program"); ok {
		t.Fatal("Max found a process that never ran")
	}
}

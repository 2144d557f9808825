package host_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/sdk"
	"github.com/flowstate/flowstate/sdk/host"
)

// helperEnv makes the test binary a host process that starts the plugin named in it,
// prints the plugin's pid and waits to be killed.
const helperEnv = "FLOWSTATE_HOST_TEST_HELPER"

func runHostHelper() {
	p, err := host.Start(context.Background(), host.Config{Path: os.Getenv(helperEnv), Logger: hclog.NewNullLogger()})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("pid", p.Pid())
	time.Sleep(time.Minute) // the host lives on until the test kills it: simulated, not a wait
	os.Exit(1)
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

func paramsAll() sdk.KeyedBackendParams {
	return sdk.KeyedBackendParams{JobID: "j", Parallelism: 1, MaxParallelism: 128, KeyGroups: allGroups}
}

func processAlive(pid int) bool {
	// A zombie is dead for this purpose: look at its state.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}

func TestHostKilledLeavesNoPlugin(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+pluginPath("mem"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the helper's output: %v", err)
	}
	pidText, ok := strings.CutPrefix(strings.TrimSpace(line), "pid ")
	if !ok {
		t.Fatalf("helper said %q", line)
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		t.Fatal(err)
	}
	if !processAlive(pid) {
		t.Fatalf("plugin %d is not running", pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The plugin is not this process's child: no wait reports its end, so look until it is
	// gone. The deadline is an outer bound; the kernel kills it at once.
	deadline := time.Now().Add(time.Minute)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("plugin %d still runs a minute after its host was killed", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/flowstate/flowstate/sdk"
)

// restoreChildEnv names the spec file of a restore child: a flowbench process (or the test
// binary, see TestMain) started with it set restores one checkpoint and exits, so that each
// variant of the restore figure starts from a fresh process and pays for new memory, as a
// job restoring after a failure does.
const restoreChildEnv = "FLOWBENCH_RESTORE_CHILD"

// restoreSpec is what a restore child restores, and how.
type restoreSpec struct {
	InProcess  bool                   // restore in the child's own process; else through the plugins
	PluginDir  string                 // built plugins
	Dir        string                 // fsstorage's checkpoint directory
	Handles    []sdk.KeyedStateHandle // the checkpoint's keyed state
	Entries    int64                  // entries it holds, for the probes
	ValueSize  int
	Size       int64  // bytes the handles refer to
	CPUProfile string // if set, the child's CPU profile of the restore
}

// restoreOutcome is what a restore child reports on its standard output.
type restoreOutcome struct {
	Seconds float64 // Restore alone: from the call to its return
	Error   string
}

// restoreInChild restores snap in mode m in a new process (this executable again) and
// returns MB/s.
func restoreInChild(ctx context.Context, work string, spec restoreSpec) (float64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("restore child: locate this executable: %w", err)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return 0, fmt.Errorf("restore child: %w", err)
	}
	name := filepath.Join(work, "restore-spec.json")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		return 0, fmt.Errorf("restore child: %w", err)
	}
	defer os.Remove(name)
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), restoreChildEnv+"="+name)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var out restoreOutcome
	if err := json.Unmarshal(bytes.TrimSpace(lastLine(stdout.Bytes())), &out); err != nil {
		return 0, fmt.Errorf("restore child (%s): %v; no outcome on its output (%w); stderr: %s", modeOf(spec.InProcess), runErr, err, stderr.String())
	}
	if out.Error != "" {
		return 0, fmt.Errorf("restore child (%s): %s", modeOf(spec.InProcess), out.Error)
	}
	if runErr != nil {
		return 0, fmt.Errorf("restore child (%s): %w; stderr: %s", modeOf(spec.InProcess), runErr, stderr.String())
	}
	return mbps(spec.Size, time.Duration(out.Seconds*float64(time.Second))), nil
}

// lastLine returns the last non-empty line of b.
func lastLine(b []byte) []byte {
	b = bytes.TrimRight(b, "\n")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}

func modeOf(inProc bool) mode {
	if inProc {
		return inProcess
	}
	return plugin
}

// restoreChild is the body of a restore child: it restores the spec in the file named by
// restoreChildEnv, prints a restoreOutcome as the last line of its standard output, and
// returns the exit code.
func restoreChild(specFile string) int {
	out := restoreOutcome{}
	d, err := runRestoreChild(specFile)
	if err != nil {
		out.Error = err.Error()
	}
	out.Seconds = d.Seconds()
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	if err != nil {
		return 1
	}
	return 0
}

func runRestoreChild(specFile string) (time.Duration, error) {
	b, err := os.ReadFile(specFile)
	if err != nil {
		return 0, err
	}
	var spec restoreSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return 0, fmt.Errorf("spec %s: %w", specFile, err)
	}
	if spec.CPUProfile != "" {
		f, err := os.Create(spec.CPUProfile)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return 0, err
		}
		defer pprof.StopCPUProfile()
	}
	return restoreOnce(context.Background(), spec)
}

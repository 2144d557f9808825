package sdk

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/hashicorp/go-hclog"
)

// CPUProfileEnv names an environment variable for profiling plugins: when it holds a
// directory, a plugin served by Serve writes a CPU profile of its whole life there, as
// <executable>-<pid>.pprof, when the host stops it. The runner passes its environment on
// to the plugins it starts, so `FLOWSTATE_PLUGIN_CPUPROFILE=/tmp/prof runner run ...`
// profiles every plugin of a job. A plugin killed outright writes no profile.
const CPUProfileEnv = "FLOWSTATE_PLUGIN_CPUPROFILE"

// startCPUProfile starts the profile CPUProfileEnv asks for and returns what stops it; a
// profile that cannot start is logged and skipped, never fatal.
func startCPUProfile(logger hclog.Logger) (stop func()) {
	dir := os.Getenv(CPUProfileEnv)
	if dir == "" {
		return func() {}
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", filepath.Base(os.Args[0]), os.Getpid()))
	f, err := os.Create(name)
	if err != nil {
		logger.Warn("cannot write CPU profile", "env", CPUProfileEnv, "error", err.Error())
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		logger.Warn("cannot start CPU profile", "env", CPUProfileEnv, "error", err.Error())
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			logger.Warn("cannot write CPU profile", "file", name, "error", err.Error())
		}
	}
}

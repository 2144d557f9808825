package server

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/sdk/internal/wire"
)

// startCPUProfile starts the profile wire.CPUProfileEnv asks for (see host.CPUProfileEnv) and returns what stops it; a
// profile that cannot start is logged and skipped, never fatal.
func startCPUProfile(logger hclog.Logger) (stop func()) {
	dir := os.Getenv(wire.CPUProfileEnv)
	if dir == "" {
		return func() {}
	}
	name := filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", filepath.Base(os.Args[0]), os.Getpid()))
	f, err := os.Create(name)
	if err != nil {
		logger.Warn("cannot write CPU profile", "env", wire.CPUProfileEnv, "error", err.Error())
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		logger.Warn("cannot start CPU profile", "env", wire.CPUProfileEnv, "error", err.Error())
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

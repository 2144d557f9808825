package runner

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/dataflow"
)

// machineMemory is dataflow.MachineMemory; tests replace it.
var machineMemory = dataflow.MachineMemory

// MemorySettings are the garbage collector's knobs ApplyMemory left in effect.
type MemorySettings struct {
	// Limit is the soft memory limit in bytes; 0 when there is none.
	Limit int64
	// GOGC is the collector's percent; config.GOGCOff when it is off.
	GOGC int
}

// String says the settings as GOMEMLIMIT and GOGC would.
func (m MemorySettings) String() string {
	limit, gogc := "none", "off"
	if m.Limit > 0 {
		limit = fmt.Sprintf("%d MiB", m.Limit>>20)
	}
	if m.GOGC != config.GOGCOff {
		gogc = fmt.Sprint(m.GOGC)
	}
	return fmt.Sprintf("memory limit %s, GOGC %s", limit, gogc)
}

// ApplyMemory sets the process's garbage collector from cfg's runner.memory.* keys, once,
// at the start of a process that runs jobs (the runner binary does; Executor.Run does
// not, so a program that embeds the runtime keeps its own settings unless it calls this):
//
//   - runner.memory.limit becomes the soft memory limit (debug.SetMemoryLimit). Unset, a
//     GOMEMLIMIT in the environment is kept, and otherwise the default (256 MiB) shrinks
//     to half of what the machine can still spare when that is less. A limit set above
//     what the machine can spare is refused, naming the key: the collector would not run
//     before the machine ran out.
//   - runner.memory.gogc becomes the collector's percent (debug.SetGCPercent). Unset, a
//     GOGC in the environment is kept, and otherwise it is off while a limit is in effect
//     (the collector runs as the heap nears the limit, so a runner whose live data is
//     small collects rarely) and 100, Go's default, when there is none. Off with no limit
//     is refused, naming both keys: the heap would grow without bound.
func ApplyMemory(cfg *config.Config) (MemorySettings, error) {
	limit := cfg.Memory.Limit
	have, from := machineMemory()
	switch {
	case cfg.IsSet(config.KeyMemoryLimit):
		if limit > 0 && have > 0 && limit > have {
			return MemorySettings{}, fmt.Errorf("%s: a memory limit of %d MiB exceeds the memory this process may still take (%d MiB, %s)", cfg.Locate(config.KeyMemoryLimit), limit>>20, have>>20, from)
		}
	case os.Getenv("GOMEMLIMIT") != "":
		if limit = debug.SetMemoryLimit(-1); limit == math.MaxInt64 {
			limit = 0
		}
	case have > 0:
		limit = min(limit, have/2)
	}
	gogc := cfg.Memory.GOGC
	switch {
	case cfg.IsSet(config.KeyMemoryGOGC):
		if gogc == config.GOGCOff && limit == 0 {
			return MemorySettings{}, fmt.Errorf("%s: off with no memory limit (%s) would let the heap grow without bound", cfg.Locate(config.KeyMemoryGOGC), cfg.Locate(config.KeyMemoryLimit))
		}
	case os.Getenv("GOGC") != "":
		gogc = debug.SetGCPercent(-1)
		debug.SetGCPercent(gogc)
		if gogc < 0 {
			gogc = config.GOGCOff
		}
	case limit == 0:
		gogc = 100
	}
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	} else {
		debug.SetMemoryLimit(math.MaxInt64)
	}
	debug.SetGCPercent(gogc) // config.GOGCOff is -1, as SetGCPercent has it
	return MemorySettings{Limit: limit, GOGC: gogc}, nil
}

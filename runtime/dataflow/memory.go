package dataflow

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/flowstate/flowstate/runtime/restart"
)

// What the memory check counts for one subtask and one record in flight.
const (
	// subtaskBytes covers a subtask's goroutine stack, its task, output and state store
	// structures, and its inbox: about 25 KiB after the attempt is built (hashmap backend
	// in the process) plus a stack of 8 to 32 KiB while it runs.
	subtaskBytes = 64 << 10
	// recordBytes is what a record in a batch costs: its slot in the batch, its key, its
	// key group, and a small record's own value (a word and its count in the word count).
	recordBytes = 128
)

// memoryNeed is an upper bound of the memory that an attempt's own subtasks and the
// batches in flight between them take, with S stages (the source stage and one per
// KeyBy), parallelism p and job.batch-size b:
//
//	need = S·p·subtaskBytes + (S−1)·p·((inboxCap + lookahead + 1)·b + min(p, sendLimitBatches)·b)·recordBytes
//
// Each of the (S−1)·p keyed subtasks holds up to inboxCap batches in its inbox and
// lookahead+1 taken in; the subtask sending to it buffers at most min(p,
// sendLimitBatches) batches' worth of records in all (see output). Everything grows
// linearly with p. Not counted: the keyed state and its caches (they grow with the keys,
// not with p), and what connectors and plugins allocate on their own (the file sink's
// write buffer, for instance).
func memoryNeed(job *Job) int64 {
	s, p, b := int64(len(job.stages)), int64(job.Parallelism), int64(job.BatchSize)
	perEdge := (inboxCap+lookahead+1)*b + min(p, sendLimitBatches)*b
	return s*p*subtaskBytes + (s-1)*p*perEdge*recordBytes
}

// machineMemory returns the memory this process may still take and where that figure
// comes from; 0 when it is unknown. Tests replace it.
var machineMemory = readMachineMemory

// MachineMemory returns the memory this process may still take, the smaller of the
// cgroup's limit less its usage and MemAvailable in /proc/meminfo, and where that figure
// comes from; 0 when it is unknown.
func MachineMemory() (int64, string) { return machineMemory() }

// readMachineMemory reads the cgroup v2 limit less the cgroup's usage
// (/sys/fs/cgroup/memory.max and memory.current) and /proc/meminfo's MemAvailable, and
// returns the smaller.
func readMachineMemory() (int64, string) {
	var have int64
	var from string
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
				if f := strings.Fields(rest); len(f) == 2 && f[1] == "kB" {
					if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
						have, from = kb<<10, "MemAvailable in /proc/meminfo"
					}
				}
			}
		}
	}
	limit, err := readInt("/sys/fs/cgroup/memory.max") // "max" when there is no limit
	if err != nil {
		return have, from
	}
	if used, err := readInt("/sys/fs/cgroup/memory.current"); err == nil {
		limit -= used
	}
	if have == 0 || limit < have {
		have, from = max(limit, 0), "the cgroup limit /sys/fs/cgroup/memory.max less memory.current"
	}
	return have, from
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

// checkMemory refuses a job whose parallelism the machine cannot hold, before anything
// is allocated for it.
func checkMemory(job *Job) error {
	have, from := machineMemory()
	need := memoryNeed(job)
	if have <= 0 || need <= have {
		return nil
	}
	fit := *job
	lo, hi := 0, job.Parallelism // need(lo) fits (or lo is 0), need(hi) does not
	for lo+1 < hi {
		fit.Parallelism = (lo + hi) / 2
		if memoryNeed(&fit) <= have {
			lo = fit.Parallelism
		} else {
			hi = fit.Parallelism
		}
	}
	advice := fmt.Sprintf("lower job.parallelism to at most %d or job.batch-size", lo)
	if lo == 0 {
		advice = "lower job.batch-size"
	}
	return restart.Permanent(fmt.Errorf("job.parallelism %d: %d stages × %d subtasks with batches of %d records (job.batch-size) need about %s of memory, but only %s is available (%s): %s",
		job.Parallelism, len(job.stages), job.Parallelism, job.BatchSize, mib(need), mib(have), from, advice))
}

func mib(n int64) string { return strconv.FormatInt(n>>20, 10) + " MiB" }

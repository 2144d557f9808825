package main

import (
	"bufio"
	"fmt"
	"os"
	goruntime "runtime"
	"strings"
)

// machine describes where the figures were measured.
type machine struct {
	CPUs      int
	CPUModel  string
	MemTotal  string
	GoVersion string
	Kernel    string
	LoadStart string // 1, 5 and 15 minute load averages when the benchmark started
	LoadEnd   string
}

// describeMachine reads the machine's description from /proc.
func describeMachine() machine {
	m := machine{CPUs: goruntime.NumCPU(), GoVersion: goruntime.Version(), CPUModel: "unknown", MemTotal: "unknown", Kernel: "unknown"}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPUModel = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		var kb int64
		if _, err := fmt.Sscanf(v, "%d kB", &kb); err == nil {
			m.MemTotal = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		} else {
			m.MemTotal = v
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	m.LoadStart = loadAverage()
	return m
}

// loadAverage returns the 1, 5 and 15 minute load averages, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// procField returns the value of the first "name : value" line of a /proc file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

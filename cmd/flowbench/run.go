package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/internal/procmem"
	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/runtime/runner"
	sdkhost "github.com/flowstate/flowstate/sdk/host"
)

// mode says where the plugins run.
type mode bool

const (
	plugin    mode = false
	inProcess mode = true
)

// modes are the variants every comparison alternates.
var modes = []mode{plugin, inProcess}

// roundModes returns the variants in the order round runs them: plugin first in even
// rounds, in-process first in odd ones, so that neither always runs on the machine the
// other has just warmed up (page cache, the benchmark's heap) or loaded.
func roundModes(round int) []mode {
	if round%2 == 1 {
		return []mode{inProcess, plugin}
	}
	return modes
}

func (m mode) String() string {
	if m == inProcess {
		return "in-process"
	}
	return "plugin"
}

// newHost returns a plugin host for m: in plugin mode one without built-ins, so that a
// missing binary fails the run instead of being measured in-process.
func newHost(pluginDir string, m mode) *pluginhost.Host {
	opts := pluginhost.Options{Dir: pluginDir, Logger: hclog.NewNullLogger()}
	if m == inProcess {
		opts.Builtins, opts.InProcess = builtin.Constructors(), true
	}
	return pluginhost.New(opts)
}

// runSpec is one run of a job through runner.Executor, with fsstorage as the checkpoint
// storage.
type runSpec struct {
	backend     string
	mode        mode
	pluginDir   string
	checkpoints string        // checkpoint directory, or a URI (s3://...) of one
	interval    time.Duration // 0: only the final checkpoint
	from        string        // "" or a checkpoint pointer to restore
	onComplete  func(c *checkpoint.Completed)
	// config holds more configuration lines (YAML), after the benchmark's own.
	config string
	// endCause, if set, is the cause with which the benchmark cancels the run's context to
	// end it (a timed window): a run ended so succeeds, with what it processed.
	endCause error
}

// runResult is what one run measured.
type runResult struct {
	elapsed time.Duration
	stats   dataflow.RunStats
	cpu     time.Duration // CPU time of the benchmark process and the plugin processes
	last    *checkpoint.Completed
	// grpcMessages are the gRPC messages of the state traffic (see stateMessages).
	grpcMessages int64
}

// stateMessages counts the gRPC messages of a state backend plugin's state traffic, both
// ways: what crosses the process boundary per record (the SDK host's call observer).
type stateMessages struct{ n atomic.Int64 }

// CallDone implements host.CallObserver.
func (c *stateMessages) CallDone(string, time.Duration, error) {}

// Message implements host.CallObserver: one message of the keyed backends' reads and
// writes (Get, Write, Scan and the write pipeline), sent or received.
func (c *stateMessages) Message(method string, _ bool) {
	switch method {
	case "StateBackend/Get", "StateBackend/Write", "StateBackend/Scan", "StateBackend/Pipeline":
		c.n.Add(1)
	}
}

// runJob runs job once with the plugins and settings of s.
func runJob(ctx context.Context, s runSpec, job *dataflow.Job) (runResult, error) {
	dir := s.checkpoints
	if !strings.Contains(dir, "://") {
		dir = "file://" + dir
	}
	yaml := fmt.Sprintf("state.backend.type: %s\nexecution.checkpointing.storage: fsstorage\n"+
		"execution.checkpointing.dir: %s\nrestart-strategy.type: none\n", s.backend, dir) + s.config
	cfg, err := config.Parse([]byte(yaml), "flowbench.yaml")
	if err != nil {
		return runResult{}, fmt.Errorf("benchmark configuration: %w", err)
	}
	if err := cfg.Apply(config.Overrides{PluginDir: s.pluginDir}); err != nil {
		return runResult{}, fmt.Errorf("benchmark configuration: %w", err)
	}
	cfg.Checkpointing.Interval = s.interval
	host := newHost(s.pluginDir, s.mode)
	defer host.Close()
	var msgs stateMessages
	host.Observe(func(name string) sdkhost.CallObserver {
		if name == s.backend {
			return &msgs
		}
		return nil
	})
	if err := config.Resolve(cfg, runner.KindsOf(ctx, host, cfg.Restart, nil)); err != nil {
		return runResult{}, fmt.Errorf("benchmark configuration: %w", err)
	}
	res := runResult{}
	stats := &dataflow.RunStats{}
	plugins := []string{s.backend, builtins.FSStorage}
	var liveErr error // the plugin processes' check during the run, at the first checkpoint
	checked := false
	x := &runner.Executor{Config: cfg, Host: host, Logger: hclog.NewNullLogger(), Stats: stats,
		OnCheckpoint: func(c *checkpoint.Completed) {
			res.last = c
			if !checked {
				_, liveErr = livePlugins(ctx, host, s.mode, plugins...)
				checked = true
			}
			if s.onComplete != nil {
				s.onComplete(c)
			}
		}}
	// A run the benchmark ends by cancelling it checks its plugin processes as it does so:
	// after it, the runner may have killed a plugin that did not answer the cancellation.
	var endErr error
	ended := make(chan struct{})
	if s.endCause != nil {
		defer context.AfterFunc(ctx, func() {
			defer close(ended)
			if errors.Is(context.Cause(ctx), s.endCause) {
				_, endErr = livePlugins(context.WithoutCancel(ctx), host, s.mode, plugins...)
			}
		})()
	}
	cpu0 := selfCPU()
	start := time.Now()
	if err := x.Run(ctx, job, s.from); err != nil && (s.endCause == nil || !errors.Is(context.Cause(ctx), s.endCause)) {
		return runResult{}, fmt.Errorf("job %s on %s (%s): %w", job.Name, s.backend, s.mode, err)
	}
	res.elapsed = time.Since(start)
	res.cpu = selfCPU() - cpu0
	if liveErr != nil {
		return runResult{}, fmt.Errorf("job %s on %s (%s): during the run: %w", job.Name, s.backend, s.mode, liveErr)
	}
	if s.endCause != nil && errors.Is(context.Cause(ctx), s.endCause) {
		<-ended
		if endErr != nil {
			return runResult{}, fmt.Errorf("job %s on %s (%s): when the benchmark ended it: %w", job.Name, s.backend, s.mode, endErr)
		}
		res.stats = *stats
		return res, nil
	}
	// After the run: its context may be the one the benchmark cancelled to end it.
	pids, err := livePlugins(context.WithoutCancel(ctx), host, s.mode, plugins...)
	if err != nil {
		return runResult{}, fmt.Errorf("job %s on %s (%s): after the run: %w", job.Name, s.backend, s.mode, err)
	}
	for _, pid := range pids {
		res.cpu += processCPU(pid)
	}
	res.stats = *stats
	res.grpcMessages = msgs.n.Load()
	return res, nil
}

// livePlugins checks, in plugin mode, that each named plugin runs as a process of its own
// that exists now, and returns their pids; in-process mode has none to check. A plugin
// measured in the benchmark's own process would report a ratio near 1 as a pass.
func livePlugins(ctx context.Context, host *pluginhost.Host, m mode, names ...string) ([]int, error) {
	if m != plugin {
		return nil, nil
	}
	var pids []int
	for _, name := range names {
		in, err := host.Open(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", name, err)
		}
		pid := in.Pid()
		if pid <= 0 {
			return nil, fmt.Errorf("plugin %s runs in the benchmark's process, not as a plugin process: the figure would not measure the process boundary", name)
		}
		if err := syscall.Kill(pid, 0); err != nil {
			return nil, fmt.Errorf("plugin %s: its process %d does not exist: %w", name, pid, err)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// selfCPU is the user and system time of this process so far.
func selfCPU() time.Duration { return rusageCPU(syscall.RUSAGE_SELF) }

// rusageCPU is the user and system time getrusage reports for who.
func rusageCPU(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is the user and system time of process pid so far (0 if unknown).
func processCPU(pid int) time.Duration {
	d, _ := procmem.CPU(pid)
	return d
}

// freshDir returns an empty directory under root.
func freshDir(root, name string) (string, error) {
	d := filepath.Join(root, name)
	if err := os.RemoveAll(d); err != nil {
		return "", fmt.Errorf("clean %s: %w", d, err)
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", d, err)
	}
	return d, nil
}

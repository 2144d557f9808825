package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowstate/flowstate/plugins/fsstorage/fsstorage"
	"github.com/flowstate/flowstate/plugins/hashmap/hashmap"
	"github.com/flowstate/flowstate/plugins/jmstorage/jmstorage"
	"github.com/flowstate/flowstate/plugins/leveldb/leveldb"
	"github.com/flowstate/flowstate/runtime"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/pluginhost"
	"github.com/flowstate/flowstate/sdk"
)

// builtins are the plugins the in-process variants load into the benchmark's process.
var builtins = map[string]func() sdk.Plugin{
	"hashmap":   func() sdk.Plugin { return hashmap.New() },
	"leveldb":   func() sdk.Plugin { return leveldb.New() },
	"jmstorage": func() sdk.Plugin { return jmstorage.New() },
	"fsstorage": func() sdk.Plugin { return fsstorage.New() },
}

// mode says where the plugins run.
type mode bool

const (
	plugin    mode = false
	inProcess mode = true
)

func (m mode) String() string {
	if m == inProcess {
		return "in-process"
	}
	return "plugin"
}

// runSpec is one run of a job through runtime.Executor.
type runSpec struct {
	backend     string
	mode        mode
	pluginDir   string
	checkpoints string        // checkpoint directory (fsstorage, file://)
	interval    time.Duration // 0: only the final checkpoint
	incremental bool
	retained    int
	from        string // "" or a checkpoint pointer to restore
	onComplete  func(c *checkpoint.Completed)
}

// runResult is what one run measured.
type runResult struct {
	elapsed time.Duration
	stats   dataflow.RunStats
}

// runJob runs job once with the plugins and settings of s.
func runJob(ctx context.Context, s runSpec, job *dataflow.Job) (runResult, error) {
	yaml := fmt.Sprintf("state.backend.type: %s\nexecution.checkpointing.storage: fsstorage\n"+
		"execution.checkpointing.dir: %s\nexecution.checkpointing.incremental: %t\n"+
		"execution.checkpointing.num-retained: %d\nrestart-strategy.type: none\n",
		s.backend, "file://"+s.checkpoints, s.incremental, max(1, s.retained))
	cfg, err := config.Parse([]byte(yaml), "flowbench.yaml")
	if err != nil {
		return runResult{}, fmt.Errorf("benchmark configuration: %w", err)
	}
	if err := cfg.Apply(config.Overrides{PluginDir: s.pluginDir}); err != nil {
		return runResult{}, fmt.Errorf("benchmark configuration: %w", err)
	}
	cfg.Checkpointing.Interval = s.interval
	host := pluginhost.New(pluginhost.Options{Dir: s.pluginDir, Builtins: builtins, InProcess: s.mode == inProcess, Logger: hclog.NewNullLogger()})
	defer host.Close()
	if err := config.Resolve(cfg, runtime.KindsOf(ctx, host)); err != nil {
		return runResult{}, fmt.Errorf("benchmark configuration: %w", err)
	}
	stats := &dataflow.RunStats{}
	x := &runtime.Executor{Config: cfg, Host: host, Logger: hclog.NewNullLogger(), Stats: stats, OnCheckpoint: s.onComplete}
	start := time.Now()
	if err := x.Run(ctx, job, s.from); err != nil {
		return runResult{}, fmt.Errorf("job %s on %s (%s): %w", job.Name, s.backend, s.mode, err)
	}
	return runResult{elapsed: time.Since(start), stats: *stats}, nil
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

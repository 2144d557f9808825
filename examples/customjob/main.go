// Command customjob is a custom Flowstate job written in Go with the job API
// (runtime/dataflow) and the Environment API (runtime/runner): a leaderboard that keeps, per
// player, the plays per game (MapState) and the best scores (ListState), reading
// "player game score" lines from a file or directory and writing one summary line per play
// to part files, exactly once.
//
// State backend and checkpoint storage are chosen in code: hashmap working state,
// checkpoints in a directory through fsstorage. By default both plugins run inside this
// process (UseInProcess with the constructors of plugins/builtin); with -plugin-dir they run as
// plugin processes from that directory instead.
//
// It imports only what a user's program can: the runtime's packages and the registry
// plugins/builtin, never a plugin package directly nor anything under internal/.
//
//	go run ./examples/customjob -input examples/customjob/input -output /tmp/leaderboard \
//	    -checkpoints /tmp/leaderboard-checkpoints
//	go run ./examples/customjob ... -from latest   # resume after a crash
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/flowstate/flowstate/plugins/builtin"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/runner"
)

// options are the command's flags.
type options struct {
	input, output, checkpoints string
	pluginDir, from, config    string
	top, parallelism           int
	interval                   time.Duration
	rate                       float64
}

func main() {
	var o options
	flag.StringVar(&o.input, "input", "examples/customjob/input", "input file or directory of \"player game score\" lines")
	flag.StringVar(&o.output, "output", "out/leaderboard", "output directory (part files)")
	flag.StringVar(&o.checkpoints, "checkpoints", "out/leaderboard-checkpoints", "checkpoint directory (fsstorage)")
	flag.StringVar(&o.pluginDir, "plugin-dir", "", "run the plugins from this directory instead of in-process")
	flag.StringVar(&o.from, "from", "", `resume from "latest" or a checkpoint/savepoint pointer`)
	flag.StringVar(&o.config, "config", "", "optional configuration file; what the code sets wins over it")
	flag.IntVar(&o.top, "top", 3, "best scores kept per player")
	flag.IntVar(&o.parallelism, "parallelism", 2, "subtasks per stage")
	flag.DurationVar(&o.interval, "interval", 500*time.Millisecond, "checkpoint interval")
	flag.Float64Var(&o.rate, "rate", 0, "records per second (0: as fast as possible)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "customjob:", err)
		os.Exit(1)
	}
}

// run configures an environment in code and executes the leaderboard job.
func run(ctx context.Context, o options) error {
	job, err := Leaderboard("leaderboard", o.input, o.output, o.top, o.parallelism)
	if err != nil {
		return fmt.Errorf("build job: %w", err)
	}
	job.Rate = o.rate
	env, err := runner.NewEnvironment(o.config)
	if err != nil {
		return err
	}
	env.SetStateBackend(runner.HashMapStateBackend())
	env.CheckpointConfig().SetCheckpointStorage(o.checkpoints) // a path: fsstorage there
	env.CheckpointConfig().SetCheckpointInterval(o.interval)
	// An interrupted run (Ctrl-C) keeps its checkpoints, so that -from latest resumes it;
	// Flink's default deletes a cancelled job's checkpoints.
	env.CheckpointConfig().SetExternalizedCheckpointRetention(config.RetainOnCancel)
	if o.pluginDir != "" {
		env.SetPluginDir(o.pluginDir)
	} else {
		env.UseInProcess(builtin.Constructors())
	}
	return env.Execute(ctx, job, o.from)
}

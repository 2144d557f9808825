package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/control"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
)

func newRunCmd(g *globalFlags) *cobra.Command {
	var file, from string
	var allowNonRestored bool
	var ov overrideFlags
	cmd := &cobra.Command{
		Use:   "run --config FILE [--from latest|POINTER] [--allow-non-restored-state] [-D key=value]... [-p N]",
		Short: "Run the job the configuration file describes",
		Long: `Run the job of the configuration file's job section with the configured state backend
and checkpoint storage. Without --from the job starts fresh; --from latest resumes from the
newest completed checkpoint of the job (by job.name) in the configured storage; --from POINTER
resumes from a checkpoint or savepoint the storage resolves (for fsstorage a chk-N or savepoint
directory, or its _metadata file). Without --from, execution.state-recovery.path decides.
A restore checks the checkpoint against the job (job type, operator types, state types, max
parallelism) and refuses a mismatch; state of operators the job no longer has is refused
unless --allow-non-restored-state drops it. Output committed after the restored checkpoint is
moved aside into a _moved-aside-* directory of the output.
-D key=value sets a configuration key over the file (repeatable), and -p N the job's
parallelism, as Flink's CLI does; both are logged.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext()
			defer stop()
			overrides, err := ov.overrides(cmd)
			if err != nil {
				return err
			}
			s, err := openSession(ctx, g, file, overrides...)
			if err != nil {
				return err
			}
			defer s.Close()
			cfg := s.cfg
			job, err := jobs.Build(jobSpec(cfg))
			if err != nil {
				return fmt.Errorf("%s: %w", cfg.File, err)
			}
			out := cmd.OutOrStdout()
			ex := config.Explain(cfg)
			fmt.Fprintf(out, "job %q (%s, parallelism %d): state backend %s, checkpoint storage %s\n",
				job.Name, cfg.Job.Type, job.Parallelism, cfg.StateBackend, cfg.CheckpointStorage)
			fmt.Fprintf(out, "working state: %s\ncheckpoints: %s\n", ex.WorkingState, ex.Checkpoints)
			var last *checkpoint.Completed
			stats := &dataflow.RunStats{}
			x := &runtime.Executor{Config: cfg, Host: s.host, Logger: s.log, Stats: stats,
				OnCheckpoint:          func(c *checkpoint.Completed) { last = c },
				AllowNonRestoredState: allowNonRestored}
			jobCtx, cancelJob := context.WithCancelCause(ctx)
			defer cancelJob(nil)
			srv, err := control.Listen(cfg.Control.Address, job.Name, func() { cancelJob(runtime.ErrJobCancelled) })
			if err != nil {
				return err
			}
			defer srv.Close()
			x.Savepoints, x.ControlAddress = srv.Savepoints(), srv.Addr()
			s.log.Info("control endpoint listening", "address", srv.Addr())
			start := time.Now()
			if err := runCancellable(jobCtx, s, func(ctx context.Context) error { return x.Run(ctx, job, from) }); err != nil {
				if errors.Is(err, errNotEnded) {
					return err
				}
				if ctx.Err() != nil {
					return fmt.Errorf("job cancelled by a signal: %w", err)
				}
				if jobCtx.Err() != nil {
					fmt.Fprintln(out, "job cancelled")
					return nil
				}
				return err
			}
			elapsed := time.Since(start)
			fmt.Fprintf(out, "finished in %s: %d records, %d checkpoints (%d failed), %d state calls\n",
				elapsed.Round(time.Millisecond), stats.Records, stats.Checkpoints, stats.FailedCheckpoints,
				stats.GetCalls+stats.WriteCalls)
			if cfg.Job.Output != "" {
				files, _ := connectors.CommittedFiles(cfg.Job.Output)
				fmt.Fprintf(out, "output: %s (%d committed part files)\n", cfg.Job.Output, len(files))
			}
			if last != nil {
				fmt.Fprintf(out, "last checkpoint: %d at %s\n", last.Metadata.CheckpointID, last.Location.ExternalPointer)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "configuration file (YAML)")
	cmd.Flags().StringVar(&from, "from", "", `resume from "latest" or a checkpoint/savepoint pointer`)
	cmd.Flags().BoolVarP(&allowNonRestored, "allow-non-restored-state", "n", false, "restore even if the checkpoint holds state of operators the job no longer has (that state is dropped)")
	ov.register(cmd, true)
	return cmd
}

// The bounds of a cancelled run (SIGINT, SIGTERM, runner stop): the job gets
// shutdownGrace to end, then its plugins are killed and it gets killWait more; then the
// runner exits whatever its plugins do. With the plugin host's and the control endpoint's
// closing, the runner ends within 10 s of the signal.
const (
	shutdownGrace = 5 * time.Second
	killWait      = 2 * time.Second
)

// errNotEnded: a cancelled job did not end within shutdownGrace.
var errNotEnded = errors.New("the job did not end in time after it was cancelled")

// runCancellable returns run(ctx)'s error. Once ctx is cancelled it waits shutdownGrace for
// run to return, then sends SIGKILL to the session's plugins and waits killWait more; a
// job that had to be ended this way gives an error wrapping errNotEnded that says so.
func runCancellable(ctx context.Context, s *session, run func(context.Context) error) error {
	errc := make(chan error, 1)
	go func() { errc <- run(ctx) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	grace := time.NewTimer(shutdownGrace)
	defer grace.Stop()
	select {
	case err := <-errc:
		return err
	case <-grace.C:
	}
	killed := s.host.KillNow()
	what := "no plugin process was running"
	if len(killed) > 0 {
		what = "killed its plugins with SIGKILL: " + strings.Join(killed, ", ")
	}
	s.log.Error(fmt.Sprintf("the job has not ended %s after it was cancelled: %s", shutdownGrace, what))
	wait := time.NewTimer(killWait)
	defer wait.Stop()
	select {
	case err := <-errc:
		return fmt.Errorf("%w (%s); %s; then it ended: %v", errNotEnded, shutdownGrace, what, err)
	case <-wait.C:
		return fmt.Errorf("%w (%s); %s; it still had not ended %s later: exiting without it", errNotEnded, shutdownGrace, what, killWait)
	}
}

// jobSpec turns the job section into a built-in job's spec.
func jobSpec(cfg *config.Config) jobs.Spec {
	j := cfg.Job
	name := j.Name
	if name == "" {
		name = j.Type
	}
	return jobs.Spec{
		Name: name, Type: j.Type, Parallelism: j.Parallelism, MaxParallelism: j.MaxParallelism,
		BatchSize: j.BatchSize, Input: j.Input, Output: j.Output, Rate: j.Rate, Keys: j.Keys, Records: j.Records,
	}
}

package main

import (
	"context"
	"fmt"
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
	cmd := &cobra.Command{
		Use:   "run --config FILE [--from latest|POINTER]",
		Short: "Run the job the configuration file describes",
		Long: `Run the job of the configuration file's job section with the configured state backend
and checkpoint storage. Without --from the job starts fresh; --from latest resumes from the
newest completed checkpoint of the job (by job.name) in the configured storage; --from POINTER
resumes from a checkpoint or savepoint the storage resolves (for fsstorage a chk-N or savepoint
directory, or its _metadata file).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext()
			defer stop()
			s, err := openSession(ctx, g, file)
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
				OnCheckpoint: func(c *checkpoint.Completed) { last = c }}
			jobCtx, cancelJob := context.WithCancel(ctx)
			defer cancelJob()
			srv, err := control.Listen(cfg.Control.Address, job.Name, cancelJob)
			if err != nil {
				return err
			}
			defer srv.Close()
			x.Savepoints, x.ControlAddress = srv.Savepoints(), srv.Addr()
			s.log.Info("control endpoint listening", "address", srv.Addr())
			start := time.Now()
			if err := x.Run(jobCtx, job, from); err != nil {
				if ctx.Err() == nil && jobCtx.Err() != nil {
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
	return cmd
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

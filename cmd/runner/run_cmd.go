package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/config/explain"
	"github.com/flowstate/flowstate/runtime/connectors"
	"github.com/flowstate/flowstate/runtime/connectors/jetstream"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/jobs"
	"github.com/flowstate/flowstate/runtime/ownership"
	"github.com/flowstate/flowstate/runtime/runner"
)

func newRunCmd(g *globalFlags) *cobra.Command {
	var file, from string
	var allowNonRestored, wait bool
	var ov overrideFlags
	cmd := &cobra.Command{
		Use:   "run --config FILE [--from latest|latest-if-any|POINTER] [--wait] [--allow-non-restored-state] [-D key=value]... [-p N]",
		Short: "Run the job the configuration file describes",
		Long: `Run the job of the configuration file's job section with the configured state backend
and checkpoint storage. Without --from the job starts fresh; --from latest resumes from the
newest completed checkpoint of the job (by job.name) in the configured storage, and --from
latest-if-any does the same but starts fresh while the job has no completed checkpoint (the
form a supervisor restarts the runner with); --from POINTER
resumes from a checkpoint or savepoint the storage resolves (for fsstorage a chk-N or savepoint
directory, or its _metadata file). Without --from, execution.state-recovery.path decides.
A restore checks the checkpoint against the job (job type, operator types, state types, max
parallelism) and refuses a mismatch; state of operators the job no longer has is refused
unless --allow-non-restored-state drops it. Output committed after the restored checkpoint is
moved aside into a _moved-aside-* directory of the output.
-D key=value sets a configuration key over the file (repeatable), and -p N the job's
parallelism, as Flink's CLI does; both are logged.
A job another runner holds is refused, unless that runner has ended on this machine (its pid
is gone or another process's): then its lease is taken over at once. --wait waits for the
holder's lease to expire (job.lease.timeout after its last renewal), with a countdown, and
then takes the job over.`,
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
			if err := cfg.Control.CheckExposure(); err != nil { // before anything is said of the job
				return fmt.Errorf("%s: %w", cfg.File, err)
			}
			mem, err := runner.ApplyMemory(cfg) // once per process, before the job allocates
			if err != nil {
				return err
			}
			s.log.Debug("garbage collector: " + mem.String())
			spec, err := withConnectors(cfg, jobSpec(cfg), s.log)
			if err != nil {
				return err
			}
			job, err := jobs.Build(spec)
			if err != nil {
				return fmt.Errorf("%s: %w", cfg.File, err)
			}
			out := cmd.OutOrStdout()
			if cfg.Cluster.Enabled {
				return runDistributed(ctx, out, s, job, from)
			}
			ex := explain.Config(cfg)
			fmt.Fprintf(out, "job %q (%s, parallelism %d): state backend %s, checkpoint storage %s\n",
				job.Name, cfg.Job.Type, job.Parallelism, cfg.StateBackend, cfg.CheckpointStorage)
			fmt.Fprintf(out, "working state: %s\ncheckpoints: %s\n", ex.WorkingState, ex.Checkpoints)
			var last *checkpoint.Completed
			stats := &dataflow.RunStats{}
			l := &runner.Launch{Config: cfg, Host: s.host, Logger: s.log, From: from, Stats: stats,
				AllowNonRestoredState: allowNonRestored, WaitForLease: wait,
				OnCheckpoint: func(c *checkpoint.Completed) { last = c },
				OnListening: func(addr, tokenFile string) {
					scheme := "http"
					if cfg.Control.CertFile != "" {
						scheme = "https"
					}
					fmt.Fprintf(out, "control endpoint and web page: %s://%s/ (token for savepoint and stop: %s)\n", scheme, addr, tokenFile)
				}}
			start := time.Now()
			if err := l.Run(ctx, job); err != nil {
				if errors.Is(err, runner.ErrNotEnded) {
					return err
				}
				if ctx.Err() != nil {
					return fmt.Errorf("the runner was stopped by a signal: %w", err)
				}
				if errors.Is(err, runner.ErrJobCancelled) || errors.Is(err, context.Canceled) {
					fmt.Fprintln(out, "job cancelled")
					return nil
				}
				if errors.As(err, new(*ownership.HeldError)) {
					return fmt.Errorf("%w; run with --wait to wait for its lease to expire and take the job over", err)
				}
				return err
			}
			elapsed := time.Since(start)
			fmt.Fprintf(out, "finished in %s: %d records, %d checkpoints (%d failed), %d state calls\n",
				elapsed.Round(time.Millisecond), stats.Records, stats.Checkpoints, stats.FailedCheckpoints,
				stats.GetCalls+stats.WriteCalls)
			if src, ok := spec.Source.(*jetstream.Source); ok && src.SkipDecodeErrors {
				fmt.Fprintf(out, "input: stream %s, %d messages skipped that did not decode\n", src.Stream, src.Skipped())
			}
			if cfg.Job.Sink == config.ConnectorJetStream {
				fmt.Fprintf(out, "output: stream %s (subject %s)\n", cfg.JetStreamSink.Stream, cfg.JetStreamSink.Subject)
			} else if cfg.Job.Output != "" {
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
	cmd.Flags().StringVar(&from, "from", "", `resume from "latest", "latest-if-any" (latest, or fresh while there is no checkpoint) or a checkpoint/savepoint pointer`)
	cmd.Flags().BoolVar(&wait, "wait", false, "when another runner holds the job, wait for its lease to expire (with a countdown) and take the job over")
	cmd.Flags().BoolVarP(&allowNonRestored, "allow-non-restored-state", "n", false, "restore even if the checkpoint holds state of operators the job no longer has (that state is dropped)")
	ov.register(cmd, true)
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

// withConnectors gives spec the source and sink job.source and job.sink choose: the text
// files of job.input and part files of job.output, or JetStream. A JetStream source logs
// to log what it skips (messages that do not decode, retention gaps), as its keys promise.
func withConnectors(cfg *config.Config, spec jobs.Spec, log hclog.Logger) (jobs.Spec, error) {
	if cfg.Job.Source == config.ConnectorJetStream {
		src, err := jetstream.SourceFromConfig(cfg)
		if err != nil {
			return spec, err
		}
		src.Logger = log
		spec.Source = src
	}
	if cfg.Job.Sink == config.ConnectorJetStream {
		sink, err := jetstream.SinkFromConfig(cfg, spec.Name)
		if err != nil {
			return spec, err
		}
		// In distributed mode each subtask of the sink is a task that starts and restores
		// on its own, on any runner.
		sink.Independent = cfg.Cluster.Enabled
		spec.Sink = sink
	}
	return spec, nil
}

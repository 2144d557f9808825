package main

import (
	"context"
	"fmt"
	"io"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/runner"
)

// runDistributed runs this runner's share of job in distributed mode (cluster.enabled):
// every task restores its own latest checkpoint, so from may only be "" or latest-if-any.
func runDistributed(ctx context.Context, out io.Writer, s *session, job *dataflow.Job, from string) error {
	cfg := s.cfg
	if from == "" {
		from = cfg.Recovery.Path
	}
	switch from {
	case runner.FromLatest:
		return fmt.Errorf("--from %s: in distributed mode (%s) every task always resumes from its own latest checkpoint: run without --from, or give the manifest of a savepoint of the job",
			from, config.KeyClusterEnabled)
	case runner.FromLatestIfAny:
		from = ""
	}
	fmt.Fprintf(out, "job %q in distributed mode: %d tasks per sub-topology, group on KV bucket %s (%s), state backend %s, checkpoint storage %s\n",
		job.Name, job.Parallelism, cfg.Cluster.Bucket, cfg.NATS.Servers, cfg.StateBackend, cfg.CheckpointStorage)
	d := &runner.Distributed{Config: cfg, Host: s.host, Logger: s.log, From: from,
		OnJoined: func(member, addr, tokenFile string) {
			scheme := "http"
			if cfg.Control.CertFile != "" {
				scheme = "https"
			}
			fmt.Fprintf(out, "joined the group of job %q as member %s; control endpoint and web page: %s://%s/ (token for savepoint and stop: %s)\n",
				job.Name, member, scheme, addr, tokenFile)
		}}
	if err := d.Run(ctx, job); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("the runner was stopped by a signal: %w", err)
		}
		return err
	}
	if ctx.Err() != nil {
		fmt.Fprintln(out, "left the group: the other runners take this runner's tasks over")
		return nil
	}
	fmt.Fprintln(out, "the job finished")
	return nil
}

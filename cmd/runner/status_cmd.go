package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/monitor"
)

func newStatusCmd(g *globalFlags) *cobra.Command {
	var file, job string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status --config FILE [--json]",
		Short: "Say whether the configured job runs, and how: uptime, throughput, checkpoints, restarts",
		Long: `Ask the runner of the job this configuration describes, at its control endpoint, how the
job is doing: its state and uptime, the address of its web page, the records per second of
each operator over the last minute, its plugins, its restarts and its latest checkpoints.
A job whose runner does not answer is reported as not running. --json prints
{job, running, address, url, details, checkpoints}, where details and checkpoints are the
answers of GET /jobs/<job> and GET /jobs/<job>/checkpoints.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg, name, err := distributedJob(file, job); err != nil || cfg != nil {
				return cmp.Or(err, clusterStatus(cmd, cfg, name, asJSON))
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			to, err := locateJob(ctx, g, file, job)
			var notRunning *notRunningError
			var st *monitor.Status
			switch {
			case errors.As(err, &notRunning):
				st = &monitor.Status{Job: notRunning.job, Reason: notRunning.msg}
			case err != nil:
				return err
			default:
				if st, err = monitor.GetStatus(ctx, to.client.HTTP(), to.client.URL(""), to.job); err != nil {
					return fmt.Errorf("status of job %q: %w", to.job, err)
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			return monitor.WriteStatus(cmd.OutOrStdout(), st)
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "configuration file (YAML)")
	cmd.Flags().StringVar(&job, "job", "", "the job's name (default: job.name of the configuration; a custom Go job's name)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/monitor"
)

func newStatusCmd(g *globalFlags) *cobra.Command {
	var file string
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
			if file == "" {
				return fmt.Errorf("--config: a configuration file is required")
			}
			cfg, err := config.Load(file)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			st, err := monitor.GetStatus(ctx, &http.Client{}, controlAddress(cfg), jobSpec(cfg).Name)
			if err != nil {
				return fmt.Errorf("status of job %q: %w", jobSpec(cfg).Name, err)
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
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the status as JSON")
	return cmd
}

// controlAddress returns where the runner of cfg's job serves its control endpoint: the
// configured rest.address and rest.port.
func controlAddress(cfg *config.Config) string {
	return cfg.Control.Address
}

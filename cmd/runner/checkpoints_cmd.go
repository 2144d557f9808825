package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/checkpoint"
)

func newCheckpointsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{Use: "checkpoints", Short: "Inspect a job's checkpoints"}
	var file string
	var asJSON bool
	list := &cobra.Command{
		Use:   "list --config FILE [--json]",
		Short: "List the retained completed checkpoints of the configured job",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signalContext()
			defer stop()
			s, err := openOfflineSession(ctx, g, file)
			if err != nil {
				return err
			}
			defer s.Close()
			in, err := s.host.Open(ctx, s.cfg.CheckpointStorage)
			if err != nil {
				return fmt.Errorf("checkpoint storage %q: %w", s.cfg.CheckpointStorage, err)
			}
			if err := in.Configure(ctx, s.cfg.StorageOptions); err != nil {
				return fmt.Errorf("configure %s: %w", in.Name(), err)
			}
			storage, _ := in.CheckpointStorage()
			job := jobSpec(s.cfg).Name
			access, err := storage.CreateCheckpointStorage(ctx, job)
			if err != nil {
				return fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), job, err)
			}
			locs, err := access.ListCompletedCheckpoints(ctx)
			if err != nil {
				return fmt.Errorf("list checkpoints of job %q: %w", job, err)
			}
			type row struct {
				ID          int64     `json:"id"`
				Epoch       int64     `json:"epoch"`
				Time        time.Time `json:"time"`
				Size        int64     `json:"size"`
				Incremental bool      `json:"incremental"`
				AddedBytes  int64     `json:"added_bytes"`
				Pointer     string    `json:"pointer"`
				Error       string    `json:"error,omitempty"`
			}
			rows := []row{}
			for _, l := range locs {
				r := row{ID: l.CheckpointID, Time: l.Time, Pointer: l.ExternalPointer}
				if m, err := checkpoint.Load(ctx, access, l); err != nil {
					r.Error = err.Error()
				} else {
					r.ID, r.Epoch, r.Time, r.Size = m.CheckpointID, m.Epoch, m.Time, m.StateSize()
					r.Incremental, r.AddedBytes = m.Incremental, m.AddedBytes
				}
				rows = append(rows, r)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			if len(rows) == 0 {
				fmt.Fprintf(out, "no completed checkpoints of job %q in %s\n", job, in.Name())
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTIME\tTYPE\tSIZE\tADDED\tPOINTER")
			for _, r := range rows {
				if r.Error != "" {
					fmt.Fprintf(tw, "%d\t-\t-\t-\t-\t%s\t(damaged: %s)\n", r.ID, r.Pointer, r.Error)
					continue
				}
				kind := "full"
				if r.Incremental {
					kind = "incremental"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s\n", r.ID, r.Time.Format(time.RFC3339), kind, r.Size, r.AddedBytes, r.Pointer)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&file, "config", "", "configuration file (YAML)")
	list.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of {id, epoch (the writer's lease epoch: --from latest restores the highest, then the highest id), time, size, incremental, added_bytes, pointer}")
	cmd.AddCommand(append([]*cobra.Command{list}, newStateCmds(g)...)...)
	return cmd
}

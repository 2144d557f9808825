package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/control"
)

func newSavepointCmd(g *globalFlags) *cobra.Command {
	var file, target string
	cmd := &cobra.Command{
		Use:   "savepoint --config FILE [--target DIR]",
		Short: "Take a savepoint of the running job; prints its pointer as the last line",
		Long: `Take a savepoint of the job running with this configuration, through the runner's control
endpoint: the address recorded with the job's lease, or the pinned rest.address and rest.port
when the job has no lease record. The endpoint refuses a request for another job. A savepoint
is self-contained and in the canonical format, so any state backend can restore it: resume
with 'runner run --from POINTER'. It goes to --target, or to execution.checkpointing.savepoint-dir.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return savepoint(cmd, g, file, target, false)
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "configuration file (YAML)")
	cmd.Flags().StringVar(&target, "target", "", "savepoint directory (default: execution.checkpointing.savepoint-dir)")
	return cmd
}

func newStopCmd(g *globalFlags) *cobra.Command {
	var file, target string
	var withSavepoint bool
	cmd := &cobra.Command{
		Use:   "stop --config FILE [--savepoint [--target DIR]]",
		Short: "Stop the running job, with a savepoint if asked",
		Long: `Stop the job running with this configuration. With --savepoint the job takes a savepoint
first and stops once it is complete; the savepoint's pointer is printed as the last line.
Without it the job is cancelled; it can resume from its latest checkpoint with --from latest.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if withSavepoint {
				return savepoint(cmd, g, file, target, true)
			}
			to, err := locateJob(cmd.Context(), g, file) // locate.go
			if err != nil {
				return err
			}
			if err := control.Cancel(cmd.Context(), to.addr, to.job); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "job cancelled")
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "configuration file (YAML)")
	cmd.Flags().BoolVar(&withSavepoint, "savepoint", false, "take a savepoint before stopping")
	cmd.Flags().StringVar(&target, "target", "", "savepoint directory (default: execution.checkpointing.savepoint-dir)")
	return cmd
}

func savepoint(cmd *cobra.Command, g *globalFlags, file, target string, stop bool) error {
	to, err := locateJob(cmd.Context(), g, file) // locate.go
	if err != nil {
		return err
	}
	ptr, err := control.TriggerSavepoint(cmd.Context(), to.addr, control.SavepointRequest{Job: to.job, Target: target, Stop: stop})
	if err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	fmt.Fprintln(cmd.OutOrStdout(), ptr)
	return nil
}

package main

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/cluster"
	"github.com/flowstate/flowstate/runtime/control"
	"github.com/flowstate/flowstate/runtime/storagepath"
)

func newSavepointCmd(g *globalFlags) *cobra.Command {
	var file, job, target, dispose string
	var force, outside bool
	cmd := &cobra.Command{
		Use:   "savepoint --config FILE [--target DIR | --dispose POINTER [--force] [--force-outside]]",
		Short: "Take a savepoint of the running job (prints its pointer as the last line), or dispose of one",
		Long: `Take a savepoint of the job running with this configuration, through the runner's control
endpoint: the address recorded with the job's lease, or the pinned rest.address and rest.port
when the job has no lease record. The request carries the job's token: $FLOWSTATE_REST_TOKEN,
else the file rest.token-file names, else the file the runner on this machine wrote for its
port (docs/operations.md). The endpoint refuses a request for another job. A savepoint
is self-contained and in the canonical format, so any state backend can restore it: resume
with 'runner run --from POINTER'. It goes to --target (an absolute path, a file:// URI or an
s3:// URI), else to execution.checkpointing.savepoint-dir of this configuration, else to the
runner's; never into a checkpoint or the job's checkpoint directory. A local --target outside
the runner's savepoint directory is proven to the runner by a file this command leaves in it
(or in its deepest existing parent) while the request runs (docs/operations.md, "Where
savepoints go").

` + disposeHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dispose != "" {
				return disposeCheckpoint(cmd, g, file, dispose, force, outside)
			}
			if cfg, name, err := distributedJob(file, job); err != nil || cfg != nil {
				return cmp.Or(err, clusterRequest(cmd, cfg, name, cluster.Request{Kind: cluster.RequestSavepoint, Target: target}))
			}
			return savepoint(cmd, g, file, job, target, false, false)
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "configuration file (YAML)")
	cmd.Flags().StringVar(&job, "job", "", "the job's name (default: job.name of the configuration; a custom Go job's name)")
	cmd.Flags().StringVar(&target, "target", "", "savepoint directory (default: execution.checkpointing.savepoint-dir)")
	cmd.Flags().StringVar(&dispose, "dispose", "", "delete this savepoint (or completed checkpoint) through the configured checkpoint storage")
	cmd.Flags().BoolVar(&force, "force", false, "with --dispose: dispose of the newest checkpoint of a job, or of one whose metadata cannot be read")
	cmd.Flags().BoolVar(&outside, "force-outside", false, "with --dispose: dispose of a savepoint or checkpoint outside execution.checkpointing.dir and execution.checkpointing.savepoint-dir")
	return cmd
}

func newStopCmd(g *globalFlags) *cobra.Command {
	var file, job, target string
	var withSavepoint, drain bool
	cmd := &cobra.Command{
		Use:   "stop --config FILE [--savepoint | --drain] [--savepoint-path DIR]",
		Short: "Stop the running job, with a savepoint if asked, or drain it",
		Long: `Stop the job running with this configuration. With --savepoint the job takes a savepoint
first and stops once it is complete; stop returns once the runner has ended the job and
closed its control endpoint (so a run started right after is not refused), and prints the
savepoint's pointer, alone on standard output.
With --drain (Flink's stop --drain) the sources end their input where they are, every record
they read is processed and committed, and the job's final checkpoint is a savepoint; the job
finishes (its runner exits 0), and stop prints the savepoint's pointer as the last line once
the output is committed and the job has ended (its runner process exits right after). A job
restored from that savepoint finishes at once: its sources are finished. Either savepoint
goes to --savepoint-path, else to execution.checkpointing.savepoint-dir of this
configuration, else to the runner's, with the rules of 'runner savepoint --target'.
Without either the job is cancelled, and stop waits (up to 15 s) until the job has ended: it
says "job cancelled" only then, and fails if the runner still answers. The runner itself ends
within 10 s, killing plugins that hold the job up. The job can resume from its latest
checkpoint with --from latest.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg, name, err := distributedJob(file, job); err != nil || cfg != nil {
				return cmp.Or(err, clusterRequest(cmd, cfg, name, cluster.Request{Kind: cluster.RequestStop, Target: target, Savepoint: withSavepoint, Drain: drain}))
			}
			if withSavepoint || drain {
				return savepoint(cmd, g, file, job, target, true, drain)
			}
			to, err := locateJob(cmd.Context(), g, file, job) // locate.go
			if err != nil {
				return err
			}
			if err := to.client.Cancel(cmd.Context(), to.job); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cancel requested; waiting up to %s for the job to end\n", stopWait)
			if err := waitEnded(cmd.Context(), to.addr, stopWait); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job cancelled: its runner at %s has ended the job and closed its control endpoint\n", to.addr)
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "configuration file (YAML)")
	cmd.Flags().StringVar(&job, "job", "", "the job's name (default: job.name of the configuration; a custom Go job's name)")
	cmd.Flags().BoolVar(&withSavepoint, "savepoint", false, "take a savepoint before stopping")
	cmd.Flags().BoolVar(&drain, "drain", false, "end the sources' input, process and commit every record read, then take the final savepoint")
	cmd.Flags().StringVar(&target, "savepoint-path", "", "savepoint directory (default: execution.checkpointing.savepoint-dir)")
	cmd.Flags().StringVar(&target, "target", "", "savepoint directory")
	cmd.Flags().MarkDeprecated("target", "use --savepoint-path")
	return cmd
}

// stopWait bounds how long stop waits for a cancelled job's runner to end: longer than
// the runner's own bound (it kills plugins that hold the job up and exits within 10 s).
const stopWait = 15 * time.Second

// waitEnded waits until nothing answers at the control endpoint addr any more: the runner
// closes it when its job has ended. It fails if something still answers after within.
func waitEnded(ctx context.Context, addr string, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var d net.Dialer
	for {
		dctx, dcancel := context.WithTimeout(ctx, time.Second)
		conn, err := d.DialContext(dctx, "tcp", addr)
		dcancel()
		if err != nil && ctx.Err() == nil {
			return nil // refused: the runner has closed its control endpoint
		}
		if conn != nil {
			conn.Close()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the job did not end: its runner still answers at %s %s after it was asked to stop; see its log", addr, within)
		case <-tick.C:
		}
	}
}

// savepoint takes a savepoint of the job (stop: then stops it, drain: drains it first; with
// either it waits until the job has ended) and prints its pointer as the last line. It goes
// to target, else to the configuration file's savepoint directory, else to the runner's. A
// local target gets the proof that this user can write there (control.ProveTarget), so
// that the runner writes to it though it is not under the runner's savepoint directory.
func savepoint(cmd *cobra.Command, g *globalFlags, file, job, target string, stop, drain bool) error {
	to, err := locateJob(cmd.Context(), g, file, job) // locate.go
	if err != nil {
		return err
	}
	if target == "" {
		target = to.savepointDir
	}
	req := control.SavepointRequest{Job: to.job, Target: target, Stop: stop, Drain: drain}
	if target != "" {
		local, isLocal, err := storagepath.Local(target)
		if err != nil {
			return fmt.Errorf("savepoint target: %w", err)
		}
		// Without a proof (a target this user cannot write to, or that is not on this
		// machine) the runner accepts only a target under its savepoint directory, and
		// its refusal says so.
		if isLocal {
			proof, remove, err := control.ProveTarget(local)
			if err != nil {
				newLogger(g).Debug("savepoint target without a proof", "target", local, "error", err)
			} else {
				defer remove()
				req.Proof = proof
			}
		}
	}
	done := followSavepoint(cmd.Context(), to, newLogger(g))
	ptr, err := to.client.TriggerSavepoint(cmd.Context(), req)
	done(err)
	if err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if stop {
		// Wait for the runner to end, so that a run started right after (--from the
		// savepoint) finds the job's lease released and a pinned rest.port free.
		if err := waitEnded(cmd.Context(), to.addr, stopWait); err != nil {
			return err
		}
	}
	switch {
	case drain:
		fmt.Fprintf(cmd.OutOrStdout(), "job drained: its output is committed and its runner at %s has ended the job and closed its control endpoint; its final savepoint:\n", to.addr)
	case stop:
		fmt.Fprintf(cmd.ErrOrStderr(), "job stopped: its runner at %s has ended the job and closed its control endpoint; its savepoint:\n", to.addr)
	}
	fmt.Fprintln(cmd.OutOrStdout(), ptr)
	return nil
}

package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/runner"
	"github.com/flowstate/flowstate/runtime/stateproc"
)

const disposeHelp = `With --dispose POINTER it takes no savepoint: it deletes the savepoint (or the completed
checkpoint) POINTER through the configured checkpoint storage, as Flink's
'flink savepoint --dispose' does. POINTER is a savepoint or checkpoint pointer, or "latest":
the newest completed checkpoint of the configured job. The storage deletes its metadata
first, so it never resolves again, then the state files it holds, then its directory once
empty: a file it did not write there stays, with the directory, and is named. Shared state
a checkpoint references is left in place, since other checkpoints may reference it. A
pointer that does not resolve is refused, and so is one outside
execution.checkpointing.dir and execution.checkpointing.savepoint-dir unless
--force-outside is given. Without --force it also refuses the newest completed checkpoint
of its job (a running job would restore it after a failure, and 'run --from latest'
would) and a checkpoint whose metadata cannot be read. Savepoints are not checked against
running jobs: a job restored from a savepoint needs it until its first checkpoint
completes.`

// disposeCheckpoint deletes the checkpoint or savepoint pointer names ("latest": the newest
// checkpoint of the configured job).
func disposeCheckpoint(cmd *cobra.Command, g *globalFlags, file, pointer string, force, outside bool) error {
	return withStorage(g, file, func(ctx context.Context, s *storageSession) error {
		if pointer == runner.FromLatest {
			c, err := s.open(ctx, pointer)
			if err != nil {
				return err
			}
			pointer = c.Location.ExternalPointer
		}
		dirs := map[string]string{config.KeyCheckpointDir: s.cfg.Checkpointing.Dir, config.KeySavepointDir: s.cfg.Checkpointing.SavepointDir}
		d, err := stateproc.Dispose(ctx, s.storage, s.access, pointer, stateproc.DisposeOptions{Force: force, Dirs: dirs, Outside: outside})
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		what := "checkpoint of unreadable metadata"
		if m := d.Metadata; m != nil {
			what = "checkpoint"
			if m.Savepoint {
				what = "savepoint"
			}
			what = fmt.Sprintf("%s %d of job %q", what, m.CheckpointID, m.JobID)
		}
		fmt.Fprintf(out, "disposed of %s: %s\n", what, d.Location.ExternalPointer)
		if d.SharedLeft > 0 {
			fmt.Fprintf(out, "left %d shared state files it referenced in place: other checkpoints may reference them\n", d.SharedLeft)
		}
		return nil
	})
}

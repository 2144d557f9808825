package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/stateproc"
)

const disposeHelp = `With --dispose POINTER it takes no savepoint: it deletes the savepoint (or the completed
checkpoint) POINTER through the configured checkpoint storage, as Flink's
'flink savepoint --dispose' does. The storage deletes its metadata first, so it never
resolves again, then its exclusive state; shared state it references is left in place,
since other checkpoints may reference it. A pointer that does not resolve is refused. Without --force it also refuses
the newest completed checkpoint of its job (a running job would restore it after a
failure, and 'run --from latest' would) and a checkpoint whose metadata cannot be read.
Savepoints are not checked against running jobs: a job restored from a savepoint needs it
until its first checkpoint completes.`

// disposeCheckpoint deletes the checkpoint or savepoint pointer names.
func disposeCheckpoint(cmd *cobra.Command, g *globalFlags, file, pointer string, force bool) error {
	return withStorage(g, file, func(ctx context.Context, s *storageSession) error {
		d, err := stateproc.Dispose(ctx, s.storage, s.access, pointer, force)
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

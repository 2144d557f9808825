package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/flowstate/flowstate/runtime/runner"
	"github.com/flowstate/flowstate/runtime/stateproc"
	"github.com/flowstate/flowstate/sdk"
)

// storageSession is a session with the configured checkpoint storage open, and the
// access of the configured job.
type storageSession struct {
	*session
	storage sdk.CheckpointStorage
	access  sdk.CheckpointStorageAccess
	job     string
}

// openStorage starts and configures the checkpoint storage of the configuration file.
func openStorage(ctx context.Context, g *globalFlags, file string) (*storageSession, error) {
	s, err := openOfflineSession(ctx, g, file)
	if err != nil {
		return nil, err
	}
	in, err := s.host.Open(ctx, s.cfg.CheckpointStorage)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("checkpoint storage %q: %w", s.cfg.CheckpointStorage, err)
	}
	if err := in.Configure(ctx, s.cfg.StorageOptions); err != nil {
		s.Close()
		return nil, fmt.Errorf("configure %s: %w", in.Name(), err)
	}
	storage, ok := in.CheckpointStorage()
	if !ok {
		s.Close()
		return nil, fmt.Errorf("execution.checkpointing.storage: plugin %q is not a checkpoint storage", in.Name())
	}
	job := jobSpec(s.cfg).Name
	access, err := storage.CreateCheckpointStorage(ctx, job)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("checkpoint storage %s: job %q: %w", in.Name(), job, err)
	}
	return &storageSession{session: s, storage: storage, access: access, job: job}, nil
}

// withStorage runs fn with the checkpoint storage of the configuration file open; SIGINT
// or SIGTERM cancels it.
func withStorage(g *globalFlags, file string, fn func(ctx context.Context, s *storageSession) error) error {
	ctx, stop := signalContext()
	defer stop()
	s, err := openStorage(ctx, g, file)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(ctx, s)
}

// open opens the checkpoint pointer names; "latest" is the checkpoint `run --from latest`
// restores: the newest intact completed checkpoint of the configured job, each damaged one
// it skips named in a warning.
func (s *storageSession) open(ctx context.Context, pointer string) (*stateproc.Checkpoint, error) {
	if pointer == runner.FromLatest {
		c, err := runner.LatestCheckpoint(ctx, s.access, s.job, 0, s.log)
		if err != nil {
			return nil, fmt.Errorf("latest: job %q: %w", s.job, err)
		}
		pointer = c.Location.ExternalPointer
	}
	return stateproc.Open(ctx, s.storage, s.access, pointer)
}

// stateCommand builds a `checkpoints` subcommand that works on one checkpoint: run gets
// it opened.
func stateCommand(g *globalFlags, use, short, long string, run func(ctx context.Context, cmd *cobra.Command, c *stateproc.Checkpoint) error) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStorage(g, file, func(ctx context.Context, s *storageSession) error {
				c, err := s.open(ctx, args[0])
				if err != nil {
					return err
				}
				return run(ctx, cmd, c)
			})
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "configuration file (YAML): its checkpoint storage reads the checkpoint")
	return cmd
}

const pointerHelp = `POINTER is a checkpoint or savepoint the configured checkpoint storage resolves (for
fsstorage a chk-N or savepoint directory, or its _metadata file), or "latest": the
checkpoint 'run --from latest' restores, the newest completed checkpoint of the configured
job whose metadata and state read back intact (a warning names each damaged one skipped).`

// newStateCmds returns the subcommands of `checkpoints` that read and rewrite one
// checkpoint: inspect, verify, dump and rescale-keys.
func newStateCmds(g *globalFlags) []*cobra.Command {
	return []*cobra.Command{newInspectCmd(g), newVerifyCmd(g), newDumpCmd(g), newRescaleKeysCmd(g)}
}

func newInspectCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := stateCommand(g, "inspect POINTER --config FILE [--json]",
		"Show what a checkpoint holds: operators, key groups, states, entries, files",
		`Show what a checkpoint or savepoint holds: the job, its type and max parallelism; for each
operator its type, parallelism and non-keyed state; its keyed states with their types, entry
counts and bytes; each subtask's handles with their key groups, format and streams; and the
shared files the checkpoint references. Every keyed state stream is read (and verified) to
count the entries; entries of a format the runner does not decode are not counted.
`+pointerHelp,
		func(ctx context.Context, cmd *cobra.Command, c *stateproc.Checkpoint) error {
			rep, err := c.Inspect(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			return rep.WriteText(cmd.OutOrStdout())
		})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	return cmd
}

func newVerifyCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := stateCommand(g, "verify POINTER --config FILE [--json]",
		"Read every state stream of a checkpoint and check its size and checksum",
		`Read every keyed state stream of a checkpoint or savepoint through the checkpoint storage
and check its size and CRC-32C against its handle in the metadata (the metadata's own
checksum is checked when it is read). Every stream is listed, intact or not; the command
fails when any is damaged.
`+pointerHelp,
		func(ctx context.Context, cmd *cobra.Command, c *stateproc.Checkpoint) error {
			checks, err := c.Verify(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			damaged := 0
			for _, sc := range checks {
				if sc.Err != nil {
					damaged++
				}
			}
			if asJSON {
				if checks == nil {
					checks = []stateproc.StreamCheck{}
				}
				if err := writeJSON(out, checks); err != nil {
					return err
				}
			} else {
				for _, sc := range checks {
					status := "ok"
					if sc.Err != nil {
						status = "DAMAGED: " + sc.Error
					}
					fmt.Fprintf(out, "%s/%d [%d,%d) %s %s %d bytes: %s\n", sc.Operator, sc.Subtask, sc.KeyGroups[0], sc.KeyGroups[1], sc.Name, sc.Ref, sc.Size, status)
				}
			}
			if damaged > 0 {
				return fmt.Errorf("%s: %d of %d state streams are damaged", c, damaged, len(checks))
			}
			if !asJSON {
				fmt.Fprintf(out, "%s: all %d state streams intact\n", c, len(checks))
			}
			return nil
		})
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of {operator, subtask, key_groups, name, ref, size, error}")
	return cmd
}

func newDumpCmd(g *globalFlags) *cobra.Command {
	var op, st string
	cmd := stateCommand(g, "dump POINTER --config FILE --operator OP [--state NAME]",
		"Print the keyed state entries of an operator as JSON lines",
		`Print the keyed state entries of one operator of a checkpoint or savepoint, one JSON object
a line: {"key_group", "key", "key_encoding", "state", "type", "value", "value_encoding"}.
The key is the record key, as a string when it is valid UTF-8 (key_encoding "utf-8"), else
base64 (key_encoding "base64"). Values of the built-in codecs (int64, string, JSON) and of
lists and maps of them are decoded by the state's recorded type (value_encoding
"decoded"); any other value is base64 (value_encoding "base64"), its type named in "type".
The operator's state streams are read and their sizes and checksums checked before any
entry is printed: a damaged checkpoint prints nothing and fails, naming the stream.
`+pointerHelp,
		func(ctx context.Context, cmd *cobra.Command, c *stateproc.Checkpoint) error {
			_, err := c.Dump(ctx, cmd.OutOrStdout(), op, st)
			return err
		})
	cmd.Flags().StringVar(&op, "operator", "", "the operator whose keyed state to print (required)")
	cmd.Flags().StringVar(&st, "state", "", "print only this state's entries")
	cmd.MarkFlagRequired("operator")
	return cmd
}

func newRescaleKeysCmd(g *globalFlags) *cobra.Command {
	var maxP int
	var target string
	cmd := stateCommand(g, "rescale-keys POINTER --config FILE --max-parallelism N [--target DIR]",
		"Write a savepoint whose key groups are recomputed for another max parallelism",
		`Write a savepoint of a checkpoint or savepoint whose keyed state is split into N key groups
instead of the checkpoint's max parallelism: every entry's key group is recomputed from its
record key, and each keyed operator gets one handle per subtask at its parallelism, over the
key groups that subtask owns under N. Non-keyed state (source positions, sink transactions)
is copied unchanged, and the savepoint keeps the checkpoint's id. A job with the same
parallelism and job.max-parallelism N restores it with 'runner run --from'. The savepoint
goes to --target, or to execution.checkpointing.savepoint-dir; its pointer is printed as
the last line.
`+pointerHelp,
		func(ctx context.Context, cmd *cobra.Command, c *stateproc.Checkpoint) error {
			if maxP == 0 {
				return fmt.Errorf("--max-parallelism: the new number of key groups is required")
			}
			loc, err := c.RescaleKeys(ctx, maxP, target)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "rescaled %s from %d to %d key groups\n", c, c.Metadata.MaxParallelism, maxP)
			fmt.Fprintln(out, loc.ExternalPointer)
			return nil
		})
	cmd.Flags().IntVar(&maxP, "max-parallelism", 0, "the new max parallelism (number of key groups), 1 to "+strconv.Itoa(stateproc.MaxKeyGroups))
	cmd.Flags().StringVar(&target, "target", "", "savepoint directory (default: execution.checkpointing.savepoint-dir)")
	return cmd
}

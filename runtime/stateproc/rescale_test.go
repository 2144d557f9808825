package stateproc_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/internal/wordcheck"
	"github.com/flowstate/flowstate/runtime/checkpoint"
	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/runtime/state"
	"github.com/flowstate/flowstate/runtime/stateproc"
	"github.com/flowstate/flowstate/sdk"
)

// TestRescaleKeysRestoresWithNewMaxParallelism stops a word count after a few checkpoints,
// rewrites its newest checkpoint for 256 key groups, and checks that the savepoint holds
// the same entries, split by the key groups of 256, that the job with 256 key groups
// refuses the checkpoint but restores the savepoint and finishes with exact output.
func TestRescaleKeysRestoresWithNewMaxParallelism(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := runWordCount(t, b.backend, b.incremental, 200<<10, 2000, 4)
			w := f.wordCount
			c := f.last(t)
			loc, err := c.RescaleKeys(bg, 256, "")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(loc.ExternalPointer, f.savepoints) {
				t.Fatalf("savepoint at %s, want it under the savepoint directory %s", loc.ExternalPointer, f.savepoints)
			}
			sp := f.open(t, loc.ExternalPointer)
			m := sp.Metadata
			if !m.Savepoint || m.MaxParallelism != 256 || m.CheckpointID != c.Metadata.CheckpointID || m.JobType != "wordcount" {
				t.Fatalf("savepoint metadata %+v: want a savepoint of checkpoint %d with 256 key groups", m, c.Metadata.CheckpointID)
			}
			checkRescaled(t, c, sp)

			_, err = f.run(t, w.job(t, 256, 0), c.Location.ExternalPointer, 0)
			if !errors.Is(err, checkpoint.ErrIncompatible) || !strings.Contains(err.Error(), "max parallelism") {
				t.Fatalf("restoring the checkpoint of 128 key groups into a job of 256: %v, want a refusal naming max parallelism", err)
			}
			if _, err := f.run(t, w.job(t, 256, 0), loc.ExternalPointer, 0); err != nil {
				t.Fatalf("restore from the rescaled savepoint: %v", err)
			}
			if err := wordcheck.Check(w.expected, w.output); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checkRescaled checks that sp holds the entries of c, each in a key group of the handle
// of its subtask, and c's non-keyed state unchanged.
func checkRescaled(t *testing.T, c, sp *stateproc.Checkpoint) {
	t.Helper()
	for _, op := range c.Metadata.Operators {
		nop, err := sp.Operator(op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if nop.Type != op.Type || nop.Parallelism != op.Parallelism || len(nop.Subtasks) != len(op.Subtasks) {
			t.Fatalf("operator %s: %+v, was %+v", op.ID, nop, op)
		}
		for i, st := range op.Subtasks {
			if !bytes.Equal(nop.Subtasks[i].Operator, st.Operator) || nop.Subtasks[i].Index != st.Index {
				t.Fatalf("operator %s subtask %d: non-keyed state %q, was %q", op.ID, st.Index, nop.Subtasks[i].Operator, st.Operator)
			}
		}
		if op.ID != "count" {
			continue
		}
		for _, st := range nop.Subtasks {
			want := sdk.KeyGroupRange{Start: st.Index * 128, End: (st.Index + 1) * 128}
			if len(st.Keyed) != 1 || st.Keyed[0].KeyGroups != want || st.Keyed[0].Format != sdk.FormatCanonical {
				t.Fatalf("subtask %d: handles %+v, want one canonical handle of key groups %s", st.Index, st.Keyed, want)
			}
		}
		before, after := entries(t, c, &op), entries(t, sp, nop)
		if len(before) == 0 || len(before) != len(after) {
			t.Fatalf("%d entries before, %d after", len(before), len(after))
		}
		for k, v := range before {
			if after[k] != v {
				t.Fatalf("entry %q: %q before, %q after", k, v, after[k])
			}
		}
		err = sp.Entries(bg, nop, func(e stateproc.Entry) error {
			if r := state.KeyGroupRangeFor(256, 2, e.Subtask); !r.Contains(e.KeyGroup) {
				t.Fatalf("key %q of key group %d is in the handle of subtask %d, which owns %s", e.Key, e.KeyGroup, e.Subtask, r)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// entries returns the keyed entries of op as state name, NUL, record key to value.
func entries(t *testing.T, c *stateproc.Checkpoint, op *checkpoint.OperatorState) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := c.Entries(bg, op, func(e stateproc.Entry) error {
		out[e.State+"\x00"+string(e.Key)] = string(e.Value)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRescaleKeysRefusesBadMaxParallelism checks the bounds of the new max parallelism.
func TestRescaleKeysRefusesBadMaxParallelism(t *testing.T) {
	c := runWordCount(t, config.Hashmap, false, 5<<10, 0, 0).last(t)
	for n, want := range map[int]string{0: "between 1 and 32768", 1 << 16: "between 1 and 32768", 1: `operator "count"`} {
		if _, err := c.RescaleKeys(bg, n, ""); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("RescaleKeys(%d) = %v, want an error saying %s", n, err, want)
		}
	}
}

// TestRescaleKeysTargetStaysOutOfCheckpoints: rescale-keys refuses a target inside its
// source checkpoint, inside the job's checkpoint directory, or leading there through a
// symbolic link, naming the target and the rule, and writes nothing there.
func TestRescaleKeysTargetStaysOutOfCheckpoints(t *testing.T) {
	f := runWordCount(t, config.Hashmap, false, 64<<10, 2000, 0)
	src := f.done[len(f.done)-1].Location.ExternalPointer
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	before := listFiles(t, f.checkpoints)
	for _, target := range []string{src, filepath.Join(src, "rescaled"), filepath.Join(f.checkpoints, "wc", "rescaled"), link} {
		_, err := f.open(t, src).RescaleKeys(bg, 64, target)
		if !errors.Is(err, sdk.ErrInvalidArgument) || !strings.Contains(err.Error(), target) || !strings.Contains(err.Error(), "checkpoint directory of job") {
			t.Errorf("rescale-keys --target %s: %v; want a refusal naming it and the job's checkpoint directory", target, err)
		}
	}
	if after := listFiles(t, f.checkpoints); !slices.Equal(before, after) {
		t.Fatalf("the refused rescale-keys changed the checkpoint directory from %v to %v", before, after)
	}
}

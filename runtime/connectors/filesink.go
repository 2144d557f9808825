package connectors

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flowstate/flowstate/runtime/dataflow"
	"github.com/flowstate/flowstate/runtime/restart"
)

// FileSink writes records as lines into part files of a directory, exactly once. Each
// subtask writes an in-progress file (.part-S-R.inprogress); at a checkpoint barrier it
// syncs and renames it to a pending file (.part-S-N-R.pending, N the checkpoint id, R a
// random token of the writer); when checkpoint N completes the pending file becomes the
// committed part file part-S-N-R.
// Committed part files are the files whose names start with neither '.' nor '_'.
// Restoring commits the pending files of the restored checkpoint, then deletes every other
// uncommitted file of the subtask. At parallelism p, subtask s answers for the files of
// every subtask number S with S mod p = s: a job restored with another parallelism gives it
// the pending files of those subtasks (Redistribute), and it deletes their uncommitted
// files once it committed those, so no subtask deletes a file another still commits.
type FileSink struct {
	// Dir is the output directory, created if missing.
	Dir string
	// Key is the setting Dir comes from (for example "job.output"), named in errors.
	Key string
	// Format turns a record into a line (without newline). When nil, a string is the line,
	// a record implementing encoding.TextAppender appends its line straight into the
	// file's buffer (no string built per record), and anything else is fmt.Sprint'ed.
	Format func(any) string
}

// OutputDir returns Dir: the runner holds a lease on it while the job runs, so that no
// other job writes there at the same time.
func (s FileSink) OutputDir() string { return s.Dir }

type sinkState struct {
	Pending []pendingFile `json:"pending"`
}

// pendingFile is a closed transaction: the part file of a checkpoint, not yet committed.
type pendingFile struct {
	Checkpoint int64  `json:"checkpoint"`
	Name       string `json:"name"` // the committed name
}

// Open implements dataflow.Sink.
func (s FileSink) Open(ctx context.Context, subtask, parallelism int, state []byte) (dataflow.SinkWriter, error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("file sink: output directory: %w", err)
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	w := &fileWriter{s: s, sub: subtask, token: hex.EncodeToString(rnd[:])}
	if state != nil {
		var st sinkState
		if err := json.Unmarshal(state, &st); err != nil {
			return nil, fmt.Errorf("file sink subtask %d: restore state %q: %w", subtask, state, err)
		}
		for _, p := range st.Pending {
			if err := w.commitOne(p); err != nil {
				return nil, err
			}
		}
	}
	if err := w.cleanup(parallelism); err != nil {
		return nil, err
	}
	return w, syncDir(s.Dir)
}

type fileWriter struct {
	s       FileSink
	sub     int
	token   string
	f       *os.File
	bw      *bufio.Writer
	pending []pendingFile
}

// paths returns the pending and committed paths of a transaction.
func (w *fileWriter) paths(p pendingFile) (pending, committed string) {
	if strings.ContainsAny(p.Name, `/\`) || strings.HasPrefix(p.Name, ".") {
		p.Name = "invalid"
	}
	return filepath.Join(w.s.Dir, "."+p.Name+".pending"), filepath.Join(w.s.Dir, p.Name)
}

// cleanup deletes the uncommitted files of the subtask numbers the subtask answers for
// (those S with S mod parallelism = its own; S = its own at an unchanged parallelism): what
// the restored checkpoint claimed is committed by then.
func (w *fileWriter) cleanup(parallelism int) error {
	entries, err := os.ReadDir(w.s.Dir)
	if err != nil {
		return fmt.Errorf("file sink: %w", err)
	}
	for _, e := range entries {
		if s, ok := uncommittedSubtask(e.Name()); ok && s%parallelism == w.sub {
			if err := os.Remove(filepath.Join(w.s.Dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("file sink: discard uncommitted %w", err)
			}
		}
	}
	return nil
}

// uncommittedSubtask returns S of an uncommitted file's name: an in-progress file
// .part-S-R.inprogress or a pending one .part-S-N-R.pending.
func uncommittedSubtask(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, ".part-")
	if !ok {
		return 0, false
	}
	s, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}

// Redistribute implements dataflow.Redistributor: the pending files of every old subtask
// go to the new subtask that answers for the subtask number in their names (S mod
// parallelism), which commits them when it opens, before it deletes that number's
// uncommitted leftovers.
func (s FileSink) Redistribute(states [][]byte, parallelism int) ([][]byte, error) {
	mine := make([]sinkState, parallelism)
	for i, st := range states {
		if st == nil {
			continue
		}
		var old sinkState
		if err := json.Unmarshal(st, &old); err != nil {
			return nil, fmt.Errorf("file sink subtask %d: state %q: %w", i, st, err)
		}
		for _, p := range old.Pending {
			sub, ok := partSubtask(p.Name)
			if !ok {
				sub = i
			}
			mine[sub%parallelism].Pending = append(mine[sub%parallelism].Pending, p)
		}
	}
	out := make([][]byte, parallelism)
	for i, st := range mine {
		b, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (w *fileWriter) commitOne(p pendingFile) error {
	from, to := w.paths(p)
	err := os.Rename(from, to)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		if err != nil {
			return fmt.Errorf("file sink: commit %w", err)
		}
		return nil
	}
	if _, serr := os.Stat(to); serr == nil {
		return nil // committed before
	}
	// No restart brings the file back: the checkpoint that holds this transaction cannot
	// be restored, nor can a later one.
	return restart.Permanent(fmt.Errorf("file sink subtask %d: pending file %s of checkpoint %d is missing, and its committed name %s is not there either: "+
		"the records it held are lost; put the file back, restore an older checkpoint or savepoint whose output is committed "+
		"(runner checkpoints list), or run without --from to start over (the committed output is then moved aside)", w.sub, from, p.Checkpoint, filepath.Base(to)))
}

// Write implements dataflow.SinkWriter.
func (w *fileWriter) Write(rec any) error {
	if w.f == nil {
		f, err := os.Create(filepath.Join(w.s.Dir, fmt.Sprintf(".part-%d-%s.inprogress", w.sub, w.token)))
		if err != nil {
			return fmt.Errorf("file sink: %w", err)
		}
		w.f, w.bw = f, bufio.NewWriterSize(f, 256<<10)
	}
	var line string
	switch v := rec.(type) {
	case string:
		if w.s.Format == nil {
			line = v
			break
		}
		line = w.s.Format(rec)
	case encoding.TextAppender:
		if w.s.Format == nil {
			b, err := v.AppendText(w.bw.AvailableBuffer())
			if err != nil {
				return fmt.Errorf("file sink subtask %d: format record %T: %w", w.sub, rec, err)
			}
			_, err = w.bw.Write(append(b, '\n'))
			return err
		}
		line = w.s.Format(rec)
	default:
		if w.s.Format != nil {
			line = w.s.Format(rec)
		} else {
			line = fmt.Sprint(rec)
		}
	}
	w.bw.WriteString(line)
	return w.bw.WriteByte('\n')
}

// PreCommit implements dataflow.SinkWriter.
func (w *fileWriter) PreCommit(id int64) ([]byte, error) {
	if w.f != nil {
		if err := w.bw.Flush(); err != nil {
			return nil, fmt.Errorf("file sink: write %s: %w", w.f.Name(), err)
		}
		if err := w.f.Sync(); err != nil {
			return nil, fmt.Errorf("file sink: sync %s: %w", w.f.Name(), err)
		}
		if err := w.f.Close(); err != nil {
			return nil, fmt.Errorf("file sink: close %s: %w", w.f.Name(), err)
		}
		p := pendingFile{Checkpoint: id, Name: fmt.Sprintf("part-%d-%d-%s", w.sub, id, w.token)}
		pending, _ := w.paths(p)
		if err := os.Rename(w.f.Name(), pending); err != nil {
			return nil, fmt.Errorf("file sink: %w", err)
		}
		w.f, w.bw = nil, nil
		w.pending = append(w.pending, p)
	}
	return json.Marshal(sinkState{Pending: w.pending})
}

// Commit implements dataflow.SinkWriter.
func (w *fileWriter) Commit(id int64) error {
	sort.Slice(w.pending, func(i, j int) bool { return w.pending[i].Checkpoint < w.pending[j].Checkpoint })
	n := 0
	for _, p := range w.pending {
		if p.Checkpoint > id {
			break
		}
		if err := w.commitOne(p); err != nil {
			return err
		}
		n++
	}
	w.pending = w.pending[n:]
	if n > 0 {
		return syncDir(w.s.Dir)
	}
	return nil
}

// Aborted implements dataflow.SinkWriter. The aborted checkpoint's pending file stays in
// the sink state, so the next completed checkpoint commits it; nothing is lost.
func (w *fileWriter) Aborted(int64) error { return nil }

// Close implements dataflow.SinkWriter. An open in-progress file is left for the next
// restore to discard.
func (w *fileWriter) Close() error {
	if w.f != nil {
		w.bw.Flush()
		err := w.f.Close()
		w.f = nil
		return err
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("file sink: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("file sink: sync directory %s: %w", dir, err)
	}
	return nil
}

// Preflight implements dataflow.Preflighter: the output directory must exist or be
// creatable, and files must be creatable in it.
func (s FileSink) Preflight(ctx context.Context) error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("%sfile sink: output directory: %w", keyPrefix(s.Key), err)
	}
	f, err := os.CreateTemp(s.Dir, ".preflight-*")
	if err != nil {
		return fmt.Errorf("%sfile sink: output directory %s is not writable: %w", keyPrefix(s.Key), s.Dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// MovedAsidePrefix starts the name of the directories RewindTo moves part files into;
// like every name starting with '_', readers of the output ignore them.
const MovedAsidePrefix = "_moved-aside-"

// RewindTo implements dataflow.Rewinder: it moves the part files committed by checkpoints
// after id (their names are part-S-N-R, N the checkpoint) into a new directory
// _moved-aside-TIME-after-chk-ID of the output directory.
func (s FileSink) RewindTo(ctx context.Context, id int64) (int, string, error) {
	return s.rewind(id, func(string) bool { return true })
}

// RewindSubtaskTo implements dataflow.SubtaskRewinder: RewindTo for the part files of
// subtask alone (part-S-N-R with S the subtask), as a task of a distributed job, which
// restores checkpoints of its own, needs.
func (s FileSink) RewindSubtaskTo(ctx context.Context, subtask int, id int64) (int, string, error) {
	return s.rewind(id, func(name string) bool {
		n, ok := partSubtask(name)
		return ok && n == subtask
	})
}

// rewind moves the committed part files whose names mine accepts, committed after
// checkpoint id, aside (RewindTo).
func (s FileSink) rewind(id int64, mine func(name string) bool) (int, string, error) {
	files, err := CommittedFiles(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("%sfile sink: %w", keyPrefix(s.Key), err)
	}
	var later []string
	for _, f := range files {
		if n, ok := partCheckpoint(filepath.Base(f)); ok && n > id && mine(filepath.Base(f)) {
			later = append(later, f)
		}
	}
	if len(later) == 0 {
		return 0, "", nil
	}
	aside := filepath.Join(s.Dir, fmt.Sprintf("%s%s-after-chk-%d", MovedAsidePrefix, time.Now().UTC().Format("20060102T150405.000Z"), id))
	if err := os.Mkdir(aside, 0o755); err != nil {
		return 0, "", fmt.Errorf("%sfile sink: %w", keyPrefix(s.Key), err)
	}
	for i, f := range later {
		if err := os.Rename(f, filepath.Join(aside, filepath.Base(f))); err != nil {
			return i, aside, fmt.Errorf("%sfile sink: move aside output committed after checkpoint %d: %w", keyPrefix(s.Key), id, err)
		}
	}
	if err := syncDir(aside); err != nil {
		return len(later), aside, err
	}
	return len(later), aside, syncDir(s.Dir)
}

// partCheckpoint returns N of a committed part file's name part-S-N-R.
func partCheckpoint(name string) (int64, bool) {
	f := strings.Split(name, "-")
	if len(f) != 4 || f[0] != "part" {
		return 0, false
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	return n, err == nil
}

// partSubtask returns S of a committed part file's name part-S-N-R.
func partSubtask(name string) (int, bool) {
	f := strings.Split(name, "-")
	if len(f) != 4 || f[0] != "part" {
		return 0, false
	}
	n, err := strconv.Atoi(f[1])
	return n, err == nil && n >= 0
}

// CommittedFiles lists the committed part files of an output directory.
func CommittedFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if n := e.Name(); n[0] != '.' && n[0] != '_' && e.Type().IsRegular() {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out, nil
}

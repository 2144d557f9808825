package connectors

import (
	"bufio"
	"context"
	"crypto/rand"
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

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// FileSink writes records as lines into part files of a directory, exactly once. Each
// subtask writes an in-progress file (.part-S-R.inprogress); at a checkpoint barrier it
// syncs and renames it to a pending file (.part-S-N.pending, N the checkpoint id); when
// checkpoint N completes the pending file becomes the committed part file part-S-N.
// Committed part files are the files whose names start with neither '.' nor '_'.
// Restoring commits the pending files of the restored checkpoint and deletes every other
// uncommitted file of the subtask.
type FileSink struct {
	// Dir is the output directory, created if missing.
	Dir string
	// Format turns a record into a line (without newline); fmt.Sprint when nil.
	Format func(any) string
}

type sinkState struct {
	Pending []int64 `json:"pending"`
}

// Open implements dataflow.Sink.
func (s FileSink) Open(ctx context.Context, subtask, parallelism int, state []byte) (dataflow.SinkWriter, error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("file sink: output directory: %w", err)
	}
	w := &fileWriter{s: s, sub: subtask}
	if state != nil {
		var st sinkState
		if err := json.Unmarshal(state, &st); err != nil {
			return nil, fmt.Errorf("file sink subtask %d: restore state %q: %w", subtask, state, err)
		}
		for _, id := range st.Pending {
			if err := w.commitOne(id); err != nil {
				return nil, err
			}
		}
	}
	if err := w.cleanup(); err != nil {
		return nil, err
	}
	return w, syncDir(s.Dir)
}

type fileWriter struct {
	s       FileSink
	sub     int
	f       *os.File
	bw      *bufio.Writer
	pending []int64
}

func (w *fileWriter) name(kind string, id int64) string {
	switch kind {
	case "pending":
		return filepath.Join(w.s.Dir, fmt.Sprintf(".part-%d-%d.pending", w.sub, id))
	default:
		return filepath.Join(w.s.Dir, fmt.Sprintf("part-%d-%d", w.sub, id))
	}
}

// cleanup deletes the subtask's uncommitted files that no restored checkpoint claims.
func (w *fileWriter) cleanup() error {
	entries, err := os.ReadDir(w.s.Dir)
	if err != nil {
		return fmt.Errorf("file sink: %w", err)
	}
	prefix := ".part-" + strconv.Itoa(w.sub) + "-"
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			if err := os.Remove(filepath.Join(w.s.Dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("file sink: discard uncommitted %w", err)
			}
		}
	}
	return nil
}

func (w *fileWriter) commitOne(id int64) error {
	from, to := w.name("pending", id), w.name("committed", id)
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
	return fmt.Errorf("file sink subtask %d: pending file %s of checkpoint %d is missing: its output is lost", w.sub, from, id)
}

// Write implements dataflow.SinkWriter.
func (w *fileWriter) Write(rec any) error {
	if w.f == nil {
		var rnd [6]byte
		rand.Read(rnd[:])
		f, err := os.Create(filepath.Join(w.s.Dir, fmt.Sprintf(".part-%d-%s.inprogress", w.sub, hex.EncodeToString(rnd[:]))))
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
		if err := os.Rename(w.f.Name(), w.name("pending", id)); err != nil {
			return nil, fmt.Errorf("file sink: %w", err)
		}
		w.f, w.bw = nil, nil
		w.pending = append(w.pending, id)
	}
	return json.Marshal(sinkState{Pending: w.pending})
}

// Commit implements dataflow.SinkWriter.
func (w *fileWriter) Commit(id int64) error {
	sort.Slice(w.pending, func(i, j int) bool { return w.pending[i] < w.pending[j] })
	n := 0
	for _, p := range w.pending {
		if p > id {
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

// Package connectors holds the built-in sources and sinks: a replayable text file source,
// a deterministic generator, and a transactional file sink.
//
// The connectors plug into the engine: they import runtime/dataflow (for the source and
// sink interfaces) and runtime/restart (to mark the failures no restart fixes), and must
// never import what drives the engine (the runner, the monitor, the plugin host, cmd/...)
// nor a plugin.
package connectors

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/flowstate/flowstate/runtime/dataflow"
)

// DefaultSplitSize is the size of the byte ranges a text file is split into, so that
// several subtasks read one large file.
const DefaultSplitSize = 4 << 20

// TextFiles reads the lines of a text file, or of every regular file in a directory (in
// name order, hidden files skipped), as strings without their line ends. Files are split
// into byte ranges, assigned round-robin to subtasks. A subtask's position is the list of
// its unfinished splits, each with the offset it reached, so a restored job reads on
// exactly where the checkpoint was taken, and a job restored with another parallelism
// unions the lists and deals them out again (Redistribute), as Flink's file source does.
type TextFiles struct {
	// Path is a file or a directory.
	Path string
	// Key is the setting Path comes from (for example "job.input"), named in errors.
	Key string
	// SplitSize is the split size in bytes (DefaultSplitSize when 0).
	SplitSize int64
}

type split struct {
	File       string
	Start, End int64
}

// splitPos is an unfinished split in a position: its file (relative to TextFiles.Path;
// "." when Path is the file), its byte range, and the next byte to read (Start: not
// begun).
type splitPos struct {
	File   string `json:"file"`
	Start  int64  `json:"start"`
	End    int64  `json:"end"`
	Offset int64  `json:"offset"`
}

// filePos is a subtask's position: its unfinished splits, the one being read first.
// Positions of earlier versions hold Split and Offset instead: the index of the split
// being read among the subtask's round-robin share of the input's splits, and the offset
// in it; they are read at the parallelism that wrote them.
type filePos struct {
	Splits []splitPos `json:"splits"`
	Split  *int       `json:"split,omitempty"`
	Offset int64      `json:"offset,omitempty"`
}

// Open implements dataflow.Source.
func (s TextFiles) Open(ctx context.Context, subtask, parallelism int, pos []byte) (dataflow.SourceReader, error) {
	if pos == nil {
		splits, err := s.splits()
		if err != nil {
			return nil, err
		}
		return &textReader{path: s.Path, splits: s.share(splits, subtask, parallelism)}, nil
	}
	left, err := s.decode(pos, subtask, parallelism)
	if err != nil {
		return nil, err
	}
	return &textReader{path: s.Path, splits: left}, nil
}

// share returns subtask's round-robin share of splits, not begun.
func (s TextFiles) share(splits []split, subtask, parallelism int) []splitPos {
	var out []splitPos
	for i, sp := range splits {
		if i%parallelism == subtask {
			out = append(out, s.pos(sp, sp.Start))
		}
	}
	return out
}

// pos returns split sp at offset in a position.
func (s TextFiles) pos(sp split, offset int64) splitPos {
	rel, err := filepath.Rel(s.Path, sp.File)
	if err != nil {
		rel = sp.File
	}
	return splitPos{File: rel, Start: sp.Start, End: sp.End, Offset: offset}
}

// decode reads the position pos of subtask of parallelism into its unfinished splits.
func (s TextFiles) decode(pos []byte, subtask, parallelism int) ([]splitPos, error) {
	var p filePos
	if err := json.Unmarshal(pos, &p); err != nil {
		return nil, fmt.Errorf("text source %s: restore position %q: %w", s.Path, pos, err)
	}
	if p.Split == nil {
		for _, sp := range p.Splits {
			if !filepath.IsLocal(sp.File) || sp.Start < 0 || sp.Start > sp.End || sp.Offset < sp.Start {
				return nil, fmt.Errorf("text source %s: restore position: bad split %+v", s.Path, sp)
			}
		}
		return p.Splits, nil
	}
	// An earlier version's position: the index into the subtask's round-robin share.
	splits, err := s.splits()
	if err != nil {
		return nil, err
	}
	mine := s.share(splits, subtask, parallelism)
	if *p.Split < 0 || *p.Split > len(mine) {
		return nil, fmt.Errorf("text source %s: restored split %d but the input now has %d splits for subtask %d: the input changed", s.Path, *p.Split, len(mine), subtask)
	}
	left := mine[*p.Split:]
	if len(left) > 0 {
		left[0].Offset = p.Offset
	}
	return left, nil
}

// Redistribute implements dataflow.Redistributor: the unfinished splits of every old
// subtask, in input order, are dealt out round-robin to parallelism subtasks; a split
// under way keeps its offset. An old subtask without a position had not begun: its
// round-robin share of the input is unfinished.
func (s TextFiles) Redistribute(states [][]byte, parallelism int) ([][]byte, error) {
	var all []splitPos
	for i, st := range states {
		var left []splitPos
		var err error
		if st == nil {
			splits, serr := s.splits()
			if serr != nil {
				return nil, serr
			}
			left = s.share(splits, i, len(states))
		} else if left, err = s.decode(st, i, len(states)); err != nil {
			return nil, fmt.Errorf("subtask %d: %w", i, err)
		}
		all = append(all, left...)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].File != all[j].File {
			return all[i].File < all[j].File
		}
		return all[i].Start < all[j].Start
	})
	return dealOut(all, parallelism, func(share []splitPos) ([]byte, error) {
		return json.Marshal(filePos{Splits: share})
	})
}

// Preflight implements dataflow.Preflighter: the input must exist and be readable.
func (s TextFiles) Preflight(ctx context.Context) error {
	splits, err := s.splits()
	if err != nil {
		return fmt.Errorf("%s%w", keyPrefix(s.Key), err)
	}
	for i, sp := range splits {
		if i > 0 && sp.File == splits[i-1].File {
			continue
		}
		f, err := os.Open(sp.File)
		if err != nil {
			return fmt.Errorf("%stext source: input %w", keyPrefix(s.Key), err)
		}
		f.Close()
	}
	return nil
}

// keyPrefix returns "KEY: " for a non-empty setting name.
func keyPrefix(key string) string {
	if key == "" {
		return ""
	}
	return key + ": "
}

func (s TextFiles) splits() ([]split, error) {
	size := s.SplitSize
	if size <= 0 {
		size = DefaultSplitSize
	}
	fi, err := os.Stat(s.Path)
	if err != nil {
		return nil, fmt.Errorf("text source: input %w", err)
	}
	var files []string
	if fi.IsDir() {
		entries, err := os.ReadDir(s.Path)
		if err != nil {
			return nil, fmt.Errorf("text source: input %w", err)
		}
		for _, e := range entries {
			if e.Type().IsRegular() && e.Name()[0] != '.' && e.Name()[0] != '_' {
				files = append(files, filepath.Join(s.Path, e.Name()))
			}
		}
		sort.Strings(files)
	} else {
		files = []string{s.Path}
	}
	var out []split
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("text source: %w", err)
		}
		for start := int64(0); start < st.Size(); start += size {
			out = append(out, split{File: f, Start: start, End: min(start+size, st.Size())})
		}
	}
	return out, nil
}

type textReader struct {
	path   string // TextFiles.Path
	splits []splitPos
	f      *os.File
	br     *bufio.Reader
}

// Read emits up to max lines. A split owns the lines that start inside it: a reader
// starting mid-file skips the partial line its split begins with, and reads past its
// end to finish the last line.
func (r *textReader) Read(ctx context.Context, max int, emit func(any)) error {
	for n := 0; n < max; {
		if len(r.splits) == 0 {
			return io.EOF
		}
		sp := &r.splits[0]
		if r.br == nil {
			if err := r.openAt(sp); err != nil {
				return err
			}
		}
		if sp.Offset >= sp.End {
			r.nextSplit()
			continue
		}
		line, err := r.br.ReadString('\n')
		sp.Offset += int64(len(line))
		if len(line) > 0 {
			emit(trimEOL(line))
			n++
		}
		if err == io.EOF {
			r.nextSplit()
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s at byte %d: %w", r.file(sp), sp.Offset, err)
		}
	}
	return nil
}

// file returns the path of sp's file.
func (r *textReader) file(sp *splitPos) string { return filepath.Join(r.path, sp.File) }

func (r *textReader) openAt(sp *splitPos) error {
	f, err := os.Open(r.file(sp))
	if err != nil {
		return fmt.Errorf("text source: %w", err)
	}
	start := sp.Offset
	// At the start of a split that is not the file's first, the line under way belongs
	// to the previous split: step back one byte and skip to the end of that line, so a
	// line starting exactly at sp.Start is kept.
	skip := start == sp.Start && sp.Start > 0
	if skip {
		start--
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("text source: seek %s to %d: %w", r.file(sp), start, err)
	}
	r.f, r.br = f, bufio.NewReaderSize(f, 256<<10)
	if skip {
		skipped, err := r.br.ReadString('\n')
		sp.Offset = start + int64(len(skipped))
		if err != nil && err != io.EOF {
			return fmt.Errorf("read %s at byte %d: %w", r.file(sp), start, err)
		}
	}
	return nil
}

func (r *textReader) nextSplit() {
	if r.f != nil {
		r.f.Close()
	}
	r.f, r.br = nil, nil
	r.splits = r.splits[1:]
}

func trimEOL(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		s = s[:n-1]
		if n := len(s); n > 0 && s[n-1] == '\r' {
			s = s[:n-1]
		}
	}
	return s
}

// Position implements dataflow.SourceReader: the unfinished splits.
func (r *textReader) Position() ([]byte, error) {
	return json.Marshal(filePos{Splits: append([]splitPos{}, r.splits...)})
}

// Close implements dataflow.SourceReader.
func (r *textReader) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

// Package connectors holds the built-in sources and sinks: a replayable text file source,
// a deterministic generator, and a transactional file sink.
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
// into byte ranges assigned round-robin to subtasks; a subtask's position is its split
// and the byte offset within it, so a restored job reads on exactly where the checkpoint
// was taken.
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

type filePos struct {
	Split  int   `json:"split"`  // index into the subtask's splits
	Offset int64 `json:"offset"` // next byte to read in that split's file
}

// Open implements dataflow.Source.
func (s TextFiles) Open(ctx context.Context, subtask, parallelism int, pos []byte) (dataflow.SourceReader, error) {
	splits, err := s.splits()
	if err != nil {
		return nil, err
	}
	r := &textReader{}
	for i, sp := range splits {
		if i%parallelism == subtask {
			r.splits = append(r.splits, sp)
		}
	}
	if pos != nil {
		if err := json.Unmarshal(pos, &r.pos); err != nil {
			return nil, fmt.Errorf("text source %s: restore position %q: %w", s.Path, pos, err)
		}
		if r.pos.Split > len(r.splits) {
			return nil, fmt.Errorf("text source %s: restored split %d but the input now has %d splits for subtask %d: the input changed", s.Path, r.pos.Split, len(r.splits), subtask)
		}
	} else if len(r.splits) > 0 {
		r.pos.Offset = r.splits[0].Start
	}
	return r, nil
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
	splits []split
	pos    filePos
	f      *os.File
	br     *bufio.Reader
}

// Read emits up to max lines. A split owns the lines that start inside it: a reader
// starting mid-file skips the partial line its split begins with, and reads past its
// end to finish the last line.
func (r *textReader) Read(ctx context.Context, max int, emit func(any)) error {
	for n := 0; n < max; {
		if r.pos.Split >= len(r.splits) {
			return io.EOF
		}
		sp := r.splits[r.pos.Split]
		if r.br == nil {
			if err := r.openAt(sp); err != nil {
				return err
			}
		}
		if r.pos.Offset >= sp.End {
			r.nextSplit()
			continue
		}
		line, err := r.br.ReadString('\n')
		r.pos.Offset += int64(len(line))
		if len(line) > 0 {
			emit(trimEOL(line))
			n++
		}
		if err == io.EOF {
			r.nextSplit()
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s at byte %d: %w", sp.File, r.pos.Offset, err)
		}
	}
	return nil
}

func (r *textReader) openAt(sp split) error {
	f, err := os.Open(sp.File)
	if err != nil {
		return fmt.Errorf("text source: %w", err)
	}
	start := r.pos.Offset
	// At the start of a split that is not the file's first, the line under way belongs
	// to the previous split: step back one byte and skip to the end of that line, so a
	// line starting exactly at sp.Start is kept.
	skip := start == sp.Start && sp.Start > 0
	if skip {
		start--
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		f.Close()
		return fmt.Errorf("text source: seek %s to %d: %w", sp.File, start, err)
	}
	r.f, r.br = f, bufio.NewReaderSize(f, 256<<10)
	if skip {
		skipped, err := r.br.ReadString('\n')
		r.pos.Offset = start + int64(len(skipped))
		if err != nil && err != io.EOF {
			return fmt.Errorf("read %s at byte %d: %w", sp.File, start, err)
		}
	}
	return nil
}

func (r *textReader) nextSplit() {
	if r.f != nil {
		r.f.Close()
	}
	r.f, r.br = nil, nil
	r.pos.Split++
	if r.pos.Split < len(r.splits) {
		r.pos.Offset = r.splits[r.pos.Split].Start
	}
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

// Position implements dataflow.SourceReader.
func (r *textReader) Position() ([]byte, error) { return json.Marshal(r.pos) }

// Close implements dataflow.SourceReader.
func (r *textReader) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

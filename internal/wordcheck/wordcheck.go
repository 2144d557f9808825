// Package wordcheck checks a word count job's committed output against its input: for
// every word, the running counts 1..N appear exactly once, N being the word's count in
// the input. Tests use it to prove exactly-once results after failures.
//
// It shares no code with what it checks: it splits words with its own pattern (maximal
// runs of Unicode letters and decimal digits, lowercased, as the word count job
// documents) and finds the committed output by the documented rule (the regular files of
// the output directory whose names start with neither '.' nor '_'). It imports only the
// standard library, nothing of this repository.
package wordcheck

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Expected counts the words of every file under input (a file or a directory).
func Expected(input string) (map[string]int64, error) { return ExpectedExcept(input, nil) }

// Unread is what a text source had not read of a file when it stopped: the lines that
// start in the byte range [Start, End) of File.
type Unread struct {
	File       string
	Start, End int64
}

// UnreadFrom decodes the positions of a text source's subtasks into what they had not
// read. A position is, as connectors.TextFiles documents it, the list of the subtask's
// unfinished splits, {"splits": [{"file", "start", "end", "offset"}]}, file relative to
// input ("." when input is the file) and offset the next byte to read.
func UnreadFrom(input string, positions [][]byte) ([]Unread, error) {
	var out []Unread
	for i, pos := range positions {
		var p struct {
			Splits *[]struct {
				File               string
				Start, End, Offset int64
			}
		}
		if err := json.Unmarshal(pos, &p); err != nil || p.Splits == nil {
			return nil, fmt.Errorf("position %d %q: not a list of splits (%v)", i, pos, err)
		}
		for _, sp := range *p.Splits {
			out = append(out, Unread{File: filepath.Join(input, sp.File), Start: sp.Offset, End: sp.End})
		}
	}
	return out, nil
}

// ExpectedExcept counts the words of every file under input, except in the lines that
// start in an unread range.
func ExpectedExcept(input string, unread []Unread) (map[string]int64, error) {
	files := []string{input}
	if fi, err := os.Stat(input); err != nil {
		return nil, err
	} else if fi.IsDir() {
		entries, err := os.ReadDir(input)
		if err != nil {
			return nil, err
		}
		files = files[:0]
		for _, e := range entries {
			if e.Type().IsRegular() && e.Name()[0] != '.' && e.Name()[0] != '_' {
				files = append(files, filepath.Join(input, e.Name()))
			}
		}
	}
	counts := map[string]int64{}
	for _, f := range files {
		skip := func(at int64) bool {
			for _, u := range unread {
				if u.File == f && at >= u.Start && at < u.End {
					return true
				}
			}
			return false
		}
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		br := bufio.NewReaderSize(fh, 1<<20)
		var at int64
		for {
			line, err := br.ReadString('\n')
			if len(line) > 0 && !skip(at) {
				for _, w := range wordRE.FindAllString(line, -1) {
					counts[strings.ToLower(w)]++
				}
			}
			at += int64(len(line))
			if err == io.EOF {
				break
			}
			if err != nil {
				fh.Close()
				return nil, err
			}
		}
		fh.Close()
	}
	return counts, nil
}

// Check compares the committed output in dir with the expected counts and returns a
// description of the first differences, or nil.
func Check(expected map[string]int64, dir string) error { return check(expected, dir, false) }

// CheckAtLeastOnce checks the committed output of at-least-once processing: for every
// word the running counts 1..M appear exactly once (a subtask's keyed state and sink
// are snapshotted together), M being at least the word's count in the input (a record
// processed twice counts twice).
func CheckAtLeastOnce(expected map[string]int64, dir string) error {
	return check(expected, dir, true)
}

// Committed reads the committed output in dir, lines "key<TAB>number", into the numbers
// of each key (in no particular order); it also returns how many lines and files it read.
func Committed(dir string) (values map[string][]int64, lines, files int, err error) {
	paths, err := committed(dir)
	if err != nil {
		return nil, 0, 0, err
	}
	values = map[string][]int64{}
	for _, f := range paths {
		fh, err := os.Open(f)
		if err != nil {
			return nil, 0, 0, err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			lines++
			key, n, ok := strings.Cut(sc.Text(), "\t")
			c, err := strconv.ParseInt(n, 10, 64)
			if !ok || err != nil {
				fh.Close()
				return nil, 0, 0, fmt.Errorf("%s: malformed line %q", f, sc.Text())
			}
			values[key] = append(values[key], c)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %w", f, err)
		}
	}
	return values, lines, len(paths), nil
}

func check(expected map[string]int64, dir string, atLeastOnce bool) error {
	seen, lines, files, err := Committed(dir)
	if err != nil {
		return err
	}
	var problems []string
	for w, want := range expected {
		got := seen[w]
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		ok := int64(len(got)) == want || atLeastOnce && int64(len(got)) > want
		for i := 0; ok && i < len(got); i++ {
			ok = got[i] == int64(i+1)
		}
		if !ok {
			at := ""
			if atLeastOnce {
				at = " at least"
			}
			problems = append(problems, fmt.Sprintf("%q: want counts 1..%d%s, got %s%s", w, want, at, brief(got), gaps(got, want)))
		}
	}
	for w := range seen {
		if _, ok := expected[w]; !ok {
			problems = append(problems, fmt.Sprintf("%q: not in the input", w))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		if len(problems) > 5 {
			problems = append(problems[:5], fmt.Sprintf("... and %d more", len(problems)-5))
		}
		return fmt.Errorf("output (%d lines in %d files) differs from the input's counts:\n  %s", lines, files, strings.Join(problems, "\n  "))
	}
	return nil
}

// wordRE matches a word: a maximal run of Unicode letters and decimal digits.
var wordRE = regexp.MustCompile(`[\p{L}\p{Nd}]+`)

// committed lists the committed output files of dir: its regular files whose names start
// with neither '.' nor '_'.
func committed(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && !strings.HasPrefix(e.Name(), "_") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// gaps describes how sorted counts got differ from 1..want: the counts missing and those
// seen more than once, a few of each, so that a loss in the middle of the output tells
// apart from one at its end.
func gaps(got []int64, want int64) string {
	seen := map[int64]int{}
	for _, c := range got {
		seen[c]++
	}
	var missing, doubled []int64
	for c := int64(1); c <= max(want, int64(len(got))); c++ {
		switch {
		case seen[c] == 0 && c <= want:
			missing = append(missing, c)
		case seen[c] > 1:
			doubled = append(doubled, c)
		}
	}
	out := ""
	if len(missing) > 0 {
		out += fmt.Sprintf("; missing %s", brief(missing))
	}
	if len(doubled) > 0 {
		out += fmt.Sprintf("; more than once %s", brief(doubled))
	}
	return out
}

func brief(xs []int64) string {
	if len(xs) > 8 {
		return fmt.Sprintf("%d values %v...", len(xs), xs[:8])
	}
	return fmt.Sprint(xs)
}

// WriteText writes about size bytes of deterministic text over a vocabulary of vocab
// words into path.
func WriteText(path string, size, vocab int, seed int64) error {
	rng := rand.New(rand.NewSource(seed))
	words := make([]string, vocab)
	for i := range words {
		words[i] = fmt.Sprintf("w%dx%s", i, strings.Repeat("a", i%7))
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	n := 0
	for n < size {
		k := 1 + rng.Intn(12)
		for i := 0; i < k; i++ {
			// Zipf-like: a few words are very common, many are rare.
			w := words[int(float64(vocab)*rng.Float64()*rng.Float64())]
			if i > 0 {
				bw.WriteByte(' ')
				n++
			}
			bw.WriteString(w)
			n += len(w)
		}
		bw.WriteString(".\n")
		n += 2
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flowstate/flowstate/runtime/builtins"
	"github.com/flowstate/flowstate/runtime/jobs"
)

// wordCountResult is item 7: the wordcount job through the plugins and in-process, both
// backends, against a hand-written one-thread word count of the same input in the same
// rounds.
type wordCountResult struct {
	inputBytes int64
	words      int64 // words in the input, as the hand-written count splits them
	distinct   int
	ceiling    []float64 // words/s of the hand-written count, per round
	runs       map[string]map[mode]*variantRuns
	rounds     int
}

// ratio is the median words/s of backend in mode m over the median of the hand-written
// count.
func (r *wordCountResult) ratio(backend string, m mode) float64 {
	return pairedRatio(r.runs[backend][m].rate, r.ceiling)
}

// worst is the lowest of the rounds' ratios of backend in mode m to the hand-written count
// of the same round.
func (r *wordCountResult) worst(backend string, m mode) float64 {
	return minOf(roundRatios(r.runs[backend][m].rate, r.ceiling))
}

// wordCount writes the input, then in each round runs the hand-written count and the job
// on each backend in both modes (which goes first alternates).
func (b *bench) wordCount(ctx context.Context, deadline time.Time) (*wordCountResult, error) {
	dir, err := freshDir(b.s.Work, "wordcount")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	input := filepath.Join(dir, "input.txt")
	if err := writeText(input, b.s.WordCountBytes); err != nil {
		return nil, err
	}
	res := &wordCountResult{inputBytes: b.s.WordCountBytes, runs: map[string]map[mode]*variantRuns{}}
	backends := []string{builtins.Hashmap, builtins.LevelDB}
	for _, be := range backends {
		res.runs[be] = map[mode]*variantRuns{plugin: {}, inProcess: {}}
	}
	for round := 0; round < b.s.JobRounds; round++ {
		if round > 0 && time.Now().After(deadline) {
			b.logf("word count: stopping after %d rounds (time budget)", round)
			break
		}
		out := filepath.Join(dir, "ceiling.txt")
		counts, words, d, err := handWrittenWordCount(input, out)
		if err != nil {
			return nil, err
		}
		res.words, res.distinct = words, len(counts)
		res.ceiling = append(res.ceiling, float64(words)/d.Seconds())
		b.logf("word count round %d: hand-written, one thread: %s words/s (%d words, %d distinct)", round+1, human(res.ceiling[round]), words, len(counts))
		for _, be := range backends {
			for _, m := range roundModes(round) {
				r, err := b.wordCountJob(ctx, be, m, input, dir, counts, words)
				if err != nil {
					return nil, err
				}
				v := res.runs[be][m]
				v.add(r)
				b.logf("word count %s %-10s round %d: %s words/s (%s)", be, m, round+1, human(v.rate[len(v.rate)-1]), r.elapsed.Round(time.Millisecond))
			}
		}
		res.rounds = round + 1
	}
	return res, nil
}

// wordCountJob runs the wordcount job over input once and checks its output against the
// hand-written count's: every word's highest running count is its count.
func (b *bench) wordCountJob(ctx context.Context, backend string, m mode, input, dir string, counts map[string]int64, words int64) (runResult, error) {
	out, err := freshDir(dir, "out")
	if err != nil {
		return runResult{}, err
	}
	ckpts, err := freshDir(dir, "checkpoints")
	if err != nil {
		return runResult{}, err
	}
	job, err := jobs.WordCount(jobs.Spec{Name: "wordcount", Type: "wordcount", Input: input, Output: out, Parallelism: 2})
	if err != nil {
		return runResult{}, fmt.Errorf("wordcount job: %w", err)
	}
	r, err := runJob(ctx, runSpec{backend: backend, mode: m, pluginDir: b.s.PluginDir, checkpoints: ckpts}, job)
	if err != nil {
		return runResult{}, err
	}
	if r.stats.Records != words {
		return runResult{}, fmt.Errorf("wordcount on %s (%s): the job counted %d words, the input holds %d", backend, m, r.stats.Records, words)
	}
	if err := checkWordCounts(out, counts); err != nil {
		return runResult{}, fmt.Errorf("wordcount on %s (%s): %w", backend, m, err)
	}
	return r, nil
}

// handWrittenWordCount is the ceiling the engine is measured against: one thread reads the
// input, splits its words as the wordcount job does (jobs.SplitWords), counts them in a
// map, and writes each running count as the job does ("word<TAB>count" lines through a
// buffer into a file, synced at the end, as the job's sink syncs at its checkpoint). It
// returns the final counts, the number of words and the time it took.
func handWrittenWordCount(input, output string) (map[string]int64, int64, time.Duration, error) {
	start := time.Now()
	in, err := os.Open(input)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("hand-written word count: %w", err)
	}
	defer in.Close()
	f, err := os.Create(output)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("hand-written word count: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 256<<10)
	counts := map[string]int64{}
	var words int64
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 256<<10), 16<<20)
	var num []byte
	for sc.Scan() {
		jobs.SplitWords(sc.Text(), func(word string) {
			counts[word]++
			words++
			w.WriteString(word)
			w.WriteByte('\t')
			num = strconv.AppendInt(num[:0], counts[word], 10)
			w.Write(num)
			w.WriteByte('\n')
		})
	}
	if err := sc.Err(); err != nil {
		return nil, 0, 0, fmt.Errorf("hand-written word count: read %s: %w", input, err)
	}
	if err := w.Flush(); err != nil {
		return nil, 0, 0, fmt.Errorf("hand-written word count: write %s: %w", output, err)
	}
	if err := f.Sync(); err != nil {
		return nil, 0, 0, fmt.Errorf("hand-written word count: sync %s: %w", output, err)
	}
	return counts, words, time.Since(start), nil
}

// checkWordCounts reads the job's committed part files in dir: a line per word of the
// input with its running count, so each word's highest count must be its count in want,
// and the lines as many as the words.
func checkWordCounts(dir string, want map[string]int64) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read output: %w", err)
	}
	got := make(map[string]int64, len(want))
	var lines, total int64
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("read output: %w", err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			word, n, ok := strings.Cut(sc.Text(), "\t")
			c, err := strconv.ParseInt(n, 10, 64)
			if !ok || err != nil {
				f.Close()
				return fmt.Errorf("output %s: bad line %q", e.Name(), sc.Text())
			}
			got[word] = max(got[word], c)
			lines++
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return fmt.Errorf("read output %s: %w", e.Name(), err)
		}
	}
	for _, c := range want {
		total += c
	}
	if lines != total || len(got) != len(want) {
		return fmt.Errorf("output has %d lines for %d distinct words; the input holds %d words, %d distinct", lines, len(got), total, len(want))
	}
	for w, c := range want {
		if got[w] != c {
			return fmt.Errorf("output counts %q %d times, the input holds it %d times", w, got[w], c)
		}
	}
	return nil
}

// writeText writes about size bytes of generated English-like text to path: words of a
// vocabulary of 50,000 drawn with Zipf's law (as word frequencies in real text are), some
// capitalized and followed by punctuation, in lines of 8 to 16 words. The seed is fixed, so
// every run counts the same input.
func writeText(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("word count input: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(7, 42))
	vocab := vocabulary(rng, 50_000)
	zipf := newZipf(rng, len(vocab), 1.05)
	var written int64
	for written < size {
		n := 8 + rng.IntN(9)
		for i := 0; i < n; i++ {
			word := vocab[zipf.next()]
			if i == 0 || rng.IntN(20) == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			}
			sep := " "
			switch {
			case i == n-1:
				sep = ".\n"
			case rng.IntN(12) == 0:
				sep = ", "
			}
			k, _ := w.WriteString(word)
			m, _ := w.WriteString(sep)
			written += int64(k + m)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("word count input %s: %w", path, err)
	}
	return f.Close()
}

// vocabulary returns n distinct lowercase words of 3 to 12 letters, shorter ones first (the
// frequent words of a language are its short ones).
func vocabulary(rng *rand.Rand, n int) []string {
	const letters = "etaoinshrdlcumwfgypbvkjxqz"
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		l := 3 + int(math.Min(9, float64(len(out))/float64(n)*8+rng.Float64()*5))
		b := make([]byte, l)
		for i := range b {
			// Favour common letters, as English does.
			b[i] = letters[int(math.Pow(rng.Float64(), 2)*float64(len(letters)))]
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// zipf draws ranks in [0, n) with probability proportional to 1/(rank+1)^s.
type zipf struct {
	rng *rand.Rand
	cdf []float64
}

func newZipf(rng *rand.Rand, n int, s float64) *zipf {
	cdf := make([]float64, n)
	sum := 0.0
	for i := range cdf {
		sum += 1 / math.Pow(float64(i+1), s)
		cdf[i] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	return &zipf{rng: rng, cdf: cdf}
}

func (z *zipf) next() int {
	u := z.rng.Float64()
	lo, hi := 0, len(z.cdf)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if z.cdf[mid] < u {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

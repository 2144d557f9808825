// Command streams prepares and reads the streams of the JetStream word count example
// (examples/jetstream/run.sh) with nats.go alone:
//
//	streams create  -server URL   the input stream (subjects in.>, partitions in.0 .. in.3) and
//	                              the output stream (allow_atomic; subjects out.> and
//	                              flowstate.markers.>), deleted first if they exist
//	streams publish -server URL [-repeat N] FILE...
//	                              each line of the files (N times over) as one message, line i
//	                              on partition subject in.<i mod 4>
//	streams count   -server URL [-repeat N] FILE...
//	                              read the word count's output (subject out.>) back, print each
//	                              word's count, and check it against the files' own words: one
//	                              message per word of the input, each word's running counts
//	                              1, 2, ..., n each exactly once (exit status 1 otherwise)
//
// It imports nats.go and, for splitting words as the wordcount job does, runtime/jobs;
// never anything under internal/ (a user's program could not).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/jsread"
	"github.com/flowstate/flowstate/runtime/jobs"
)

// The example's streams and subjects (examples/jetstream/config.yaml names the same).
const (
	InputStream   = "wordcount-in"
	InputPrefix   = "in"
	Partitions    = 4
	OutputStream  = "wordcount-out"
	OutputSubject = "out.>"
	MarkerSubject = "flowstate.markers.>"
)

// apiTimeout bounds each JetStream call.
const apiTimeout = 30 * time.Second

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "streams:", err)
		os.Exit(1)
	}
}

// run carries out one command with its flags, printing to out.
func run(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: streams create|publish|count -server URL [-repeat N] [FILE...]")
	}
	cmd := args[0]
	fs := flag.NewFlagSet("streams "+cmd, flag.ContinueOnError)
	server := fs.String("server", nats.DefaultURL, "NATS server URL(s), comma-separated")
	repeat := fs.Int("repeat", 1, "publish (or expect) the files' lines this many times over")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	nc, err := nats.Connect(*server)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", *server, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream on %s: %w", *server, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	switch cmd {
	case "create":
		return create(ctx, js, out)
	case "publish":
		lines, err := readLines(fs.Args(), *repeat)
		if err != nil {
			return err
		}
		return publish(ctx, js, lines, out)
	case "count":
		lines, err := readLines(fs.Args(), *repeat)
		if err != nil {
			return err
		}
		return count(ctx, js, lines, out)
	}
	return fmt.Errorf("unknown command %q: create, publish or count", cmd)
}

// create makes both streams afresh.
func create(ctx context.Context, js jetstream.JetStream, out io.Writer) error {
	for _, cfg := range []jetstream.StreamConfig{
		{Name: InputStream, Subjects: []string{InputPrefix + ".>"}, Storage: jetstream.FileStorage},
		{Name: OutputStream, Subjects: []string{OutputSubject, MarkerSubject}, Storage: jetstream.FileStorage, AllowAtomicPublish: true},
	} {
		if err := js.DeleteStream(ctx, cfg.Name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("delete stream %s: %w", cfg.Name, err)
		}
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			return fmt.Errorf("create stream %s (subjects %v): %w", cfg.Name, cfg.Subjects, err)
		}
		fmt.Fprintf(out, "created stream %s on %s\n", cfg.Name, strings.Join(cfg.Subjects, ", "))
	}
	return nil
}

// publish sends line i on in.<i mod Partitions> and waits for every acknowledgement.
func publish(ctx context.Context, js jetstream.JetStream, lines []string, out io.Writer) error {
	futures := make([]jetstream.PubAckFuture, len(lines))
	for i, line := range lines {
		subj := fmt.Sprintf("%s.%d", InputPrefix, i%Partitions)
		f, err := js.PublishAsync(subj, []byte(line))
		if err != nil {
			return fmt.Errorf("publish line %d on %s: %w", i+1, subj, err)
		}
		futures[i] = f
	}
	for i, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("publish line %d on %s: %w", i+1, f.Msg().Subject, err)
		case <-ctx.Done():
			return fmt.Errorf("publish: %d lines unacknowledged: %w", len(lines)-i, ctx.Err())
		}
	}
	fmt.Fprintf(out, "published %d lines on %s.0 .. %s.%d of stream %s\n", len(lines), InputPrefix, InputPrefix, Partitions-1, InputStream)
	return nil
}

// count reads the output back, prints each word's count (most frequent first) and checks
// the output against lines: exactly one message per word occurrence.
func count(ctx context.Context, js jetstream.JetStream, lines []string, out io.Writer) error {
	msgs, err := jsread.All(ctx, js, OutputStream, apiTimeout, OutputSubject)
	if err != nil {
		return fmt.Errorf("read %s of stream %s: %w", OutputSubject, OutputStream, err)
	}
	counts, err := finalCounts(msgs)
	if err != nil {
		return err
	}
	words := make([]string, 0, len(counts))
	for w := range counts {
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if counts[words[i]] != counts[words[j]] {
			return counts[words[i]] > counts[words[j]]
		}
		return words[i] < words[j]
	})
	for _, w := range words {
		fmt.Fprintf(out, "%s\t%d\n", w, counts[w])
	}
	want, total := expectedCounts(lines)
	if err := check(msgs, want); err != nil {
		return fmt.Errorf("the output of stream %s is not exact: %w", OutputStream, err)
	}
	fmt.Fprintf(out, "exact: %d output messages for the %d words of the input, %d distinct, each running count once\n", len(msgs), total, len(want))
	return nil
}

// finalCounts parses "word<TAB>count" messages into each word's highest count.
func finalCounts(msgs []jsread.Message) (map[string]int64, error) {
	counts := map[string]int64{}
	for i, m := range msgs {
		w, c, err := parse(m.Data)
		if err != nil {
			return nil, fmt.Errorf("output message %d: %w", i+1, err)
		}
		counts[w] = max(counts[w], c)
	}
	return counts, nil
}

func parse(m []byte) (string, int64, error) {
	w, n, ok := strings.Cut(string(m), "\t")
	c, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || c < 1 {
		return "", 0, fmt.Errorf("%q is not word<TAB>count", m)
	}
	return w, c, nil
}

// check holds msgs to want: for each word w, the running counts 1 .. want[w], each exactly
// once, and nothing else.
func check(msgs []jsread.Message, want map[string]int64) error {
	seen := map[string]map[int64]int{}
	for _, m := range msgs {
		w, c, err := parse(m.Data)
		if err != nil {
			return err
		}
		if seen[w] == nil {
			seen[w] = map[int64]int{}
		}
		seen[w][c]++
	}
	for w, n := range want {
		for c := int64(1); c <= n; c++ {
			if k := seen[w][c]; k != 1 {
				return fmt.Errorf("%q's running count %d is in the output %d times, want once (the input holds %q %d times)", w, c, k, w, n)
			}
		}
		if len(seen[w]) != int(n) {
			return fmt.Errorf("%q has %d distinct running counts in the output; the input holds it %d times", w, len(seen[w]), n)
		}
	}
	for w := range seen {
		if _, ok := want[w]; !ok {
			return fmt.Errorf("%q is in the output but not in the input", w)
		}
	}
	return nil
}

// expectedCounts counts the words of lines as the wordcount job splits them.
func expectedCounts(lines []string) (map[string]int64, int64) {
	want := map[string]int64{}
	var total int64
	for _, l := range lines {
		jobs.SplitWords(l, func(w string) { want[w]++; total++ })
	}
	return want, total
}

// readLines returns the lines of files, repeat times over.
func readLines(files []string, repeat int) ([]string, error) {
	if len(files) == 0 {
		return nil, errors.New("name the input text files")
	}
	var once []string
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			once = append(once, sc.Text())
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
	var lines []string
	for i := 0; i < repeat; i++ {
		lines = append(lines, once...)
	}
	return lines, nil
}

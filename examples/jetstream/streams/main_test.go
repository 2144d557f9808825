package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/flowstate/flowstate/internal/natstest"
)

// TestStreamsCreatePublishCount runs the example's commands against a real server: create
// makes both streams, publish puts the lines on the four partition subjects, and count
// accepts an output holding each running count once (the markers beside it ignored) and
// refuses one with a running count doubled, naming the word.
func TestStreamsCreatePublishCount(t *testing.T) {
	c := natstest.StartServer(t, natstest.Options{})
	text := "The cat saw the dog.\nA dog, a cat!\n\nthe end\n"
	input := filepath.Join(t.TempDir(), "input.txt")
	if err := os.WriteFile(input, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(append([]string{args[0], "-server", c.URL()}, args[1:]...), &out)
		return out.String(), err
	}
	if out, err := cmd("create"); err != nil || !strings.Contains(out, "created stream wordcount-out on out.>, flowstate.markers.>") {
		t.Fatalf("create: %v\n%s", err, out)
	}
	if _, err := cmd("publish", "-repeat", "2", input); err != nil {
		t.Fatal(err)
	}
	js := c.JetStream(t)
	lines := natstest.ReadAll(t, js, InputStream)
	want := natstest.Lines(text + text)
	if len(lines) != len(want) {
		t.Fatalf("%d input messages, want %d", len(lines), len(want))
	}
	for i, m := range lines {
		if string(m.Data) != want[i] || m.Subject != "in."+strconv.Itoa(i%Partitions) {
			t.Fatalf("input message %d: %s %q, want in.%d %q", i, m.Subject, m.Data, i%Partitions, want[i])
		}
	}

	// What the word count writes: each word's running count, counted here on its own
	// (letters and digits, lowercased), with a marker message beside them.
	running := map[string]int{}
	ctx := context.Background()
	for _, l := range want {
		for _, w := range strings.FieldsFunc(strings.ToLower(l), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			running[w]++
			if _, err := js.Publish(ctx, "out.counts", []byte(w+"\t"+strconv.Itoa(running[w]))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := js.Publish(ctx, "flowstate.markers.wordcount.0", []byte(`{"checkpoint":1}`)); err != nil {
		t.Fatal(err)
	}
	out, err := cmd("count", "-repeat", "2", input)
	if err != nil {
		t.Fatalf("count of an exact output: %v\n%s", err, out)
	}
	for _, want := range []string{"the\t6\n", "cat\t4\n", "exact: 22 output messages for the 22 words of the input, 6 distinct"} {
		if !strings.Contains(out, want) {
			t.Fatalf("count printed no %q:\n%s", want, out)
		}
	}
	if _, err := js.Publish(ctx, "out.counts", []byte("dog\t3")); err != nil {
		t.Fatal(err)
	}
	if _, err := cmd("count", "-repeat", "2", input); err == nil || !strings.Contains(err.Error(), `"dog"'s running count 3 is in the output 2 times`) {
		t.Fatalf("count of an output with a record doubled: %v", err)
	}
}

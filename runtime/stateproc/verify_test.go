package stateproc_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/flowstate/flowstate/runtime/config"
	"github.com/flowstate/flowstate/sdk"
)

// TestVerifyNamesDamagedStreams truncates one state file of a word count's final
// checkpoint and flips a bit in the other: Verify reports each, naming its file, and
// Inspect refuses the checkpoint.
func TestVerifyNamesDamagedStreams(t *testing.T) {
	c := runWordCount(t, config.Hashmap, false, 50<<10, 0, 0).last(t)
	checks, err := c.Verify(bg)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 2 {
		t.Fatalf("%d streams checked, want one per subtask of count: %+v", len(checks), checks)
	}
	for _, sc := range checks {
		if sc.Err != nil || sc.Operator != "count" || !strings.HasPrefix(sc.Ref, "file://") {
			t.Fatalf("intact checkpoint: %+v", sc)
		}
	}
	path := func(ref string) string {
		u, err := url.Parse(ref)
		if err != nil {
			t.Fatal(err)
		}
		return u.Path
	}
	truncated, flipped := path(checks[0].Ref), path(checks[1].Ref)
	if err := os.Truncate(truncated, checks[0].Size/2); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(flipped)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(flipped, b, 0o644); err != nil {
		t.Fatal(err)
	}

	checks, err = c.Verify(bg)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"(truncated?)", "checksum"} {
		sc := checks[i]
		if !errors.Is(sc.Err, sdk.ErrCorrupt) || !strings.Contains(sc.Error, sc.Ref) || !strings.Contains(sc.Error, want) {
			t.Fatalf("stream %d: %+v; want an error wrapping ErrCorrupt naming %s and saying %q", i, sc, sc.Ref, want)
		}
	}
	where := fmt.Sprintf("operator %q subtask %d", "count", checks[0].Subtask)
	if _, err := c.Inspect(bg); err == nil || !strings.Contains(err.Error(), checks[0].Ref) || !strings.Contains(err.Error(), where) {
		t.Fatalf("Inspect of a damaged checkpoint: %v; want an error naming %s and %s", err, where, checks[0].Ref)
	}
}

// TestDumpChecksStreamsBeforePrinting flips a bit in the second subtask's state file of a
// word count's final checkpoint: Dump prints nothing, not even the intact first subtask's
// entries, and fails naming the damaged stream, so no altered value is ever printed.
func TestDumpChecksStreamsBeforePrinting(t *testing.T) {
	c := runWordCount(t, config.Hashmap, false, 50<<10, 0, 0).last(t)
	checks, err := c.Verify(bg)
	if err != nil || len(checks) != 2 || checks[0].Subtask > checks[1].Subtask {
		t.Fatalf("%+v, %v: want two streams of count, by subtask", checks, err)
	}
	u, err := url.Parse(checks[1].Ref)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(u.Path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(u.Path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	n, err := c.Dump(bg, &out, "count", "")
	if !errors.Is(err, sdk.ErrCorrupt) || !strings.Contains(err.Error(), checks[1].Ref) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("Dump of a damaged checkpoint: %v; want an error wrapping ErrCorrupt naming %s and its checksum", err, checks[1].Ref)
	}
	if n != 0 || out.Len() != 0 {
		t.Fatalf("Dump printed %d entries before failing:\n%.300s", n, out.String())
	}
}

package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/runtime/ownership"
)

// leaseTimeout is the job.lease.timeout of the word count configs: long enough that a
// busy machine renews in time, short enough that a takeover after a kill is quick.
const leaseTimeout = "4s"

// storageLeaseLine is logged once a runner holds the lease on its job in its checkpoint
// storage: from then on it owns the job.
var storageLeaseLine = regexp.MustCompile(`(holding the lease|took over a lease)[^\n]*lease="checkpoint storage`)

// refusedLine is the refusal of a runner whose job another runner holds; it says when the
// holder's lease expires.
var refusedLine = regexp.MustCompile(`is held by [^\n]*expires in (\S+) unless renewed`)

// owns waits until r holds its job's lease in the checkpoint storage, or exits; it
// reports whether r holds it.
func (r *runner) owns(t *testing.T) bool {
	t.Helper()
	testwait.For(t, "the runner to take its job or exit", time.Minute, func() error {
		if r.exited() || storageLeaseLine.MatchString(r.out.String()) {
			return nil
		}
		return &outputError{err: errors.New("it holds no lease in its checkpoint storage"), r: r}
	})
	return storageLeaseLine.MatchString(r.out.String())
}

// runWhenFree starts a runner of s's job, with --wait if a runner killed or frozen before
// still holds the job (see whenFree).
func (s *wordcountSetup) runWhenFree(t *testing.T, extra ...string) *runner {
	t.Helper()
	return whenFree(t, func(more ...string) *runner { return s.run(t, slices.Concat(extra, more)...) })
}

// whenFree starts a runner with start, given more flags of `runner run`. If it is refused
// because the lease of a runner killed or frozen before is live, it starts it again with
// --wait: that runner waits for the lease to expire, as the refusal says, and takes the job
// over; whenFree returns once it has. A runner that failed for another reason is returned
// as it is: the caller looks at it.
func whenFree(t *testing.T, start func(more ...string) *runner) *runner {
	t.Helper()
	r := start()
	if r.owns(t) || !refusedLine.MatchString(r.out.String()) {
		return r
	}
	r = start("--wait")
	r.owns(t)
	return r
}

// waitLeasesExpired waits until the leases a killed runner of s held, in its checkpoint
// directory and in its output directory, have expired, by the times their records say.
func (s *wordcountSetup) waitLeasesExpired(t *testing.T) {
	t.Helper()
	for _, path := range []string{filepath.Join(s.dir, "checkpoints", "wc", "_lease"), filepath.Join(s.output, ownership.OutputLeaseFile)} {
		testwait.For(t, "the lease "+path+" to expire", time.Minute, func() error {
			if r := readLease(t, path); r != nil && r.Live(time.Now()) {
				return fmt.Errorf("live until %s", r.Expires().Format(time.RFC3339Nano))
			}
			return nil
		})
	}
}

// readLease reads the record of a lease file written by sdk/filelease; nil when there is
// none.
func readLease(t *testing.T, path string) *ownership.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	_, data, ok := strings.Cut(string(b), "\n")
	if !ok {
		t.Fatalf("lease file %s has no header line: %q", path, b)
	}
	r, err := ownership.DecodeRecord([]byte(data))
	if err != nil {
		t.Fatalf("lease file %s: %v", path, err)
	}
	return &r
}

package e2e

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	deadline := time.Now().Add(time.Minute)
	for !storageLeaseLine.MatchString(r.out.String()) {
		if r.exited() {
			return storageLeaseLine.MatchString(r.out.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runner neither took its job nor exited:\n%s", tail(r.out.String(), 20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// runWhenFree starts a runner of s's job. While it is refused because the lease of a
// runner killed or frozen before is live, it starts it again once that lease expires, as
// the refusal says.
func (s *wordcountSetup) runWhenFree(t *testing.T, extra ...string) *runner {
	t.Helper()
	return whenFree(t, func() *runner { return s.run(t, extra...) })
}

// whenFree starts a runner with start. While it is refused because the lease of a runner
// killed or frozen before is live, it starts it again once that lease expires, as the
// refusal says. A runner that failed for another reason is returned as it is.
func whenFree(t *testing.T, start func() *runner) *runner {
	t.Helper()
	for attempt := 1; ; attempt++ {
		r := start()
		if r.owns(t) {
			return r
		}
		m := refusedLine.FindStringSubmatch(r.out.String())
		if m == nil || attempt == 20 {
			return r // failed for another reason: the caller looks at it
		}
		wait, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatalf("refusal %q: %v", m[0], err)
		}
		time.Sleep(wait + 50*time.Millisecond) // the holder's lease expires then
	}
}

// waitLeasesExpired waits until the leases a killed runner of s held, in its checkpoint
// directory and in its output directory, have expired, by the times their records say.
func (s *wordcountSetup) waitLeasesExpired(t *testing.T) {
	t.Helper()
	for _, path := range []string{filepath.Join(s.dir, "checkpoints", "wc", "_lease"), filepath.Join(s.output, ownership.OutputLeaseFile)} {
		r := readLease(t, path)
		if r == nil {
			continue
		}
		time.Sleep(time.Until(r.Expires()) + 50*time.Millisecond)
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

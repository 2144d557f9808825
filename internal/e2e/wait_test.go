package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testwait"
)

// waitFor waits until probe, given r's output so far, returns nil (testwait.For). It
// gives up at once when r exits first; its failure names what was awaited and probe's
// last error, and shows the tail of r's output.
func waitFor(t *testing.T, r *runner, what string, within time.Duration, probe func(out string) error) {
	t.Helper()
	testwait.For(t, what, within, func() error {
		exited := r.exited() // first: once r has exited, the output read next is all of it
		err := probe(r.out.String())
		switch {
		case err == nil:
			return nil
		case exited:
			return testwait.Stop(&outputError{err: fmt.Errorf("%w; the runner exited (%v)", err, r.err), r: r})
		}
		return &outputError{err: err, r: r}
	})
}

// outputError is a probe's error with the tail of the runner's output, read when the
// error is printed: only a failure pays for it.
type outputError struct {
	err error
	r   *runner
}

func (e *outputError) Error() string {
	return fmt.Sprintf("%v\nrunner output:\n%s", e.err, tail(e.r.out.String(), 30))
}

func (e *outputError) Unwrap() error { return e.err }

// waitOutput waits until r's output contains s.
func waitOutput(t *testing.T, r *runner, s string, within time.Duration) {
	t.Helper()
	waitFor(t, r, fmt.Sprintf("%q in the runner's output", s), within, func(out string) error {
		if !strings.Contains(out, s) {
			return fmt.Errorf("not in %d lines", strings.Count(out, "\n"))
		}
		return nil
	})
}

// waitMatch waits until re matches r's output and returns the first match's submatches.
func waitMatch(t *testing.T, r *runner, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	var m []string
	waitFor(t, r, fmt.Sprintf("a line matching %q in the runner's output", re), within, func(out string) error {
		if m = re.FindStringSubmatch(out); m == nil {
			return fmt.Errorf("no match in %d lines", strings.Count(out, "\n"))
		}
		return nil
	})
	return m
}

// waitMatches waits until re matches r's output at least n times.
func waitMatches(t *testing.T, r *runner, re *regexp.Regexp, n int, within time.Duration) {
	t.Helper()
	waitFor(t, r, fmt.Sprintf("%d matches of %q in the runner's output", n, re), within, func(out string) error {
		if got := len(re.FindAllStringIndex(out, -1)); got < n {
			return fmt.Errorf("%d matches", got)
		}
		return nil
	})
}

// count returns how many times re matches r's output now.
func (r *runner) count(re *regexp.Regexp) int { return len(re.FindAllStringIndex(r.out.String(), -1)) }

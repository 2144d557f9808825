package jmstorage

import (
	"strings"

	"github.com/flowstate/flowstate/sdk/layout"
)

// refScheme starts the refs and pointers of state held in memory.
const refScheme = "jm:"

// checkJobID refuses job ids that cannot serve as one directory name.
func checkJobID(jobID string) error {
	if err := layout.CheckJobID(jobID); err != nil {
		return errs.Wrap(err, "checkpoint storage")
	}
	return nil
}

// parsedRef is a ref "jm:<job>/<location>/<name>" taken apart.
type parsedRef struct {
	job, location, name string
}

// parseRef takes a jm: ref apart; ok is false for anything else or a ref whose job or
// location could not be a directory name.
func parseRef(ref string) (parsedRef, bool) {
	rest, ok := strings.CutPrefix(ref, refScheme)
	if !ok {
		return parsedRef{}, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || checkJobID(parts[0]) != nil || parts[2] == "" {
		return parsedRef{}, false
	}
	if _, isChk := layout.ParseCheckpointDir(parts[1]); !isChk && parts[1] != layout.SharedDir && !layout.IsSavepointDir(parts[1]) {
		return parsedRef{}, false
	}
	return parsedRef{job: parts[0], location: parts[1], name: parts[2]}, true
}

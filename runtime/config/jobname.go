package config

import (
	"fmt"
	"strings"
)

// MaxJobNameLength is the longest job name allowed: the name is a directory name in the
// checkpoint storage, and the files beside it (its lease, ".lock") must stay under the 255
// bytes a file name may have.
const MaxJobNameLength = 200

// CheckJobName refuses a job name that cannot be the job's directory in every checkpoint
// storage: the name must be 1 to MaxJobNameLength characters, each an ASCII letter, digit,
// '.', '_' or '-', and must neither start with '.' nor contain "..". The error says which
// rule the name breaks.
func CheckJobName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the job name is empty")
	case len(name) > MaxJobNameLength:
		return fmt.Errorf("the job name is %d characters long, at most %d are allowed", len(name), MaxJobNameLength)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("a job name must not start with '.'")
	case strings.Contains(name, ".."):
		return fmt.Errorf(`a job name must not contain ".."`)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("a job name may hold only ASCII letters, digits, '.', '_' and '-', not %q", r)
		}
	}
	return nil
}

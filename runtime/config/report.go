package config

import (
	"errors"
)

// ErrorEntry is one problem of a configuration that does not load, for machine-readable
// output.
type ErrorEntry struct {
	// File and Line locate the key in the file; Flag names the command-line flag that set
	// it instead. All are empty when the problem is not about one key (the file cannot be
	// read, is not YAML, ...).
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Flag string `json:"flag,omitempty"`
	Key  string `json:"key,omitempty"`
	// Kind is the sentinel the error wraps ("unknown key", "bad value", "not supported",
	// ...); "" for other errors.
	Kind string `json:"kind,omitempty"`
	// Message is the whole message, as the runner prints it.
	Message string `json:"message"`
}

// sentinels are the errors of this package an ErrorEntry names by kind.
var sentinels = []error{ErrUnknownKey, ErrBadValue, ErrConflict, ErrDuplicate, ErrUnknownPlugin, ErrWrongKind, ErrUnsupported}

// ErrorEntries splits an error of Load, Parse, Apply or Resolve into one entry per problem.
func ErrorEntries(err error) []ErrorEntry {
	if err == nil {
		return []ErrorEntry{}
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []ErrorEntry
		for _, e := range j.Unwrap() {
			out = append(out, ErrorEntries(e)...)
		}
		return out
	}
	entry := ErrorEntry{Message: err.Error()}
	var ce *Error
	if errors.As(err, &ce) {
		entry.File, entry.Line, entry.Flag, entry.Key = ce.File, ce.Line, ce.Flag, ce.Key
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			entry.Kind = s.Error()
			break
		}
	}
	return []ErrorEntry{entry}
}

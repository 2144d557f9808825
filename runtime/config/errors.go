package config

import (
	"errors"
	"fmt"
	"sort"
)

// Errors a configuration problem wraps, so that callers can tell them apart with errors.Is.
var (
	// ErrUnknownKey: a key that is neither a current, a deprecated nor a plugin option key.
	ErrUnknownKey = errors.New("unknown key")
	// ErrBadValue: a value that does not parse or is out of range.
	ErrBadValue = errors.New("bad value")
	// ErrConflict: an old and a new key (or two spellings of one key) set different values.
	ErrConflict = errors.New("conflicting keys")
	// ErrDuplicate: the same key appears twice in the file.
	ErrDuplicate = errors.New("duplicate key")
	// ErrUnknownPlugin: a plugin name that cannot be found or launched.
	ErrUnknownPlugin = errors.New("unknown plugin")
	// ErrWrongKind: a plugin selected for a role (state backend or checkpoint storage) it
	// does not implement.
	ErrWrongKind = errors.New("wrong plugin kind")
)

// Error is a problem with one key of a configuration file. Its message reads
// "FILE:LINE: KEY: what is wrong".
type Error struct {
	// File is the configuration file's name; empty when the value came from code.
	File string
	// Line is the key's line in File; 0 when unknown.
	Line int
	// Key is the key as written in the file.
	Key string
	// Err says what is wrong; it wraps one of the Err* values of this package.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	loc := e.File
	if loc == "" {
		loc = "config"
	}
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", loc, e.Line)
	}
	return fmt.Sprintf("%s: %s: %v", loc, e.Key, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// errorList collects the errors of one parse.
type errorList []*Error

func (l *errorList) add(file string, line int, key string, err error) {
	*l = append(*l, &Error{File: file, Line: line, Key: key, Err: err})
}

// err returns nil, the single error, or all errors joined in line order.
func (l errorList) err() error {
	switch len(l) {
	case 0:
		return nil
	case 1:
		return l[0]
	}
	sort.SliceStable(l, func(i, j int) bool { return l[i].Line < l[j].Line })
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errors.Join(errs...)
}

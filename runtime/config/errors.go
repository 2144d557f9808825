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
	// ErrUnsupported: a key Apache Flink defines that turns on a feature Flowstate does not
	// implement (unaligned checkpoints, local recovery, the changelog backend, ...).
	ErrUnsupported = errors.New("not supported")
)

// Error is a problem with one key of a configuration file. Its message reads
// "FILE:LINE: KEY: what is wrong", or "-D KEY: what is wrong" for a key set on the command
// line.
type Error struct {
	// File is the configuration file's name; empty when the value came from code or the
	// command line.
	File string
	// Line is the key's line in File; 0 when unknown.
	Line int
	// Flag is the command-line flag that set the key ("-D" or "-p"); empty for keys of the
	// file.
	Flag string
	// Key is the key as written in the file or on the command line.
	Key string
	// Err says what is wrong; it wraps one of the Err* values of this package.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Flag != "" {
		return fmt.Sprintf("%s %s: %v", e.Flag, e.Key, e.Err)
	}
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

// addAt adds an error about leaf l: located in the file, or named by its flag.
func (l *errorList) addAt(file string, lf leaf, err error) {
	if lf.flag != "" {
		*l = append(*l, &Error{Flag: lf.flag, Key: lf.key, Err: err})
		return
	}
	l.add(file, lf.line, lf.key, err)
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

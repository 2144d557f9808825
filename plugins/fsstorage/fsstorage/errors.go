package fsstorage

import "fmt"

// kindError is an error whose message is exactly what the storage says and which wraps an
// sdk sentinel (its kind) and, optionally, an underlying cause.
type kindError struct {
	msg   string
	kind  error
	cause error
}

// Error implements error.
func (e *kindError) Error() string { return e.msg }

// Unwrap returns the sentinel and the cause, for errors.Is and errors.As.
func (e *kindError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// errorf returns an error wrapping kind whose message is "fsstorage: " plus the formatted
// text. When cause is not nil it is wrapped too and its message appended.
func errorf(kind, cause error, format string, args ...any) error {
	msg := "fsstorage: " + fmt.Sprintf(format, args...)
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &kindError{msg: msg, kind: kind, cause: cause}
}

// wrapf returns an error wrapping err whose message is "fsstorage: " plus the formatted text
// and err's message.
func wrapf(err error, format string, args ...any) error {
	return &kindError{msg: "fsstorage: " + fmt.Sprintf(format, args...) + ": " + err.Error(), kind: err}
}

package dirstorage

import "fmt"

// Errors makes the errors of one storage: every message starts with its value, the
// storage's name ("fsstorage: ..."), and every error wraps what it is about (an sdk
// sentinel, an io/fs error, the cause) for errors.Is and errors.As, without repeating the
// sentinel's own text.
type Errors string

// New returns an error wrapping kind whose message is the storage's name and the
// formatted text.
func (e Errors) New(kind error, format string, args ...any) error {
	return &kindError{msg: string(e) + ": " + fmt.Sprintf(format, args...), kind: kind}
}

// Wrap returns an error wrapping err whose message is the storage's name, the formatted
// text and err's message.
func (e Errors) Wrap(err error, format string, args ...any) error {
	return &kindError{msg: string(e) + ": " + fmt.Sprintf(format, args...) + ": " + err.Error(), kind: err}
}

// WrapAs is Wrap for an error that is also of kind: it wraps both.
func (e Errors) WrapAs(kind, err error, format string, args ...any) error {
	return &kindError{msg: string(e) + ": " + fmt.Sprintf(format, args...) + ": " + err.Error(), kind: kind, cause: err}
}

// kindError is an error whose message is exactly what the storage says and which wraps
// its kind and, optionally, a cause.
type kindError struct {
	msg   string
	kind  error
	cause error
}

// Error implements error.
func (e *kindError) Error() string { return e.msg }

// Unwrap returns the kind and the cause, for errors.Is and errors.As.
func (e *kindError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

package jmstorage

import "fmt"

// kindError is an error whose message is exactly what the storage says and which wraps an
// sdk sentinel or another error (its kind) and, optionally, a cause.
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

// errorf returns an error wrapping kind whose message is "jmstorage: " plus the formatted
// text (the kind's own text is not repeated).
func errorf(kind error, format string, args ...any) error {
	return &kindError{msg: "jmstorage: " + fmt.Sprintf(format, args...), kind: kind}
}

// wrapf returns an error wrapping err whose message is "jmstorage: " plus the formatted text
// and err's message.
func wrapf(err error, format string, args ...any) error {
	return &kindError{msg: "jmstorage: " + fmt.Sprintf(format, args...) + ": " + err.Error(), kind: err}
}

// kindWrapf is wrapf that also wraps the sentinel kind.
func kindWrapf(kind, err error, format string, args ...any) error {
	return &kindError{msg: "jmstorage: " + fmt.Sprintf(format, args...) + ": " + err.Error(), kind: kind, cause: err}
}

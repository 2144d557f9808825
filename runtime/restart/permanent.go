package restart

import "errors"

// errPermanent marks failures that restarting the job cannot fix.
var errPermanent = errors.New("restarting cannot fix this")

type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() []error {
	return []error{e.err, errPermanent}
}

// Permanent marks err as a failure that restarting cannot fix (a missing input, an
// output that cannot be written, an incompatible checkpoint): the runner fails the job at
// once instead of going through the restart strategy. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil || IsPermanent(err) {
		return err
	}
	return permanentError{err}
}

// IsPermanent reports whether err, or an error it wraps, was marked by Permanent.
func IsPermanent(err error) bool { return errors.Is(err, errPermanent) }

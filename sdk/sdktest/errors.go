package sdktest

import "fmt"

// wrapf adds context to err, keeping it for errors.Is.
func wrapf(err error, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}

package daemon

import "errors"

// UsageError marks a problem with flags or configuration (exit code 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ExitCode maps a daemon's error to its process exit code: 0 for nil, 2
// for usage and configuration errors, 1 otherwise.
func ExitCode(err error) int {
	var u *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u):
		return 2
	}
	return 1
}

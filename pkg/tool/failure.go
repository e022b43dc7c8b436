package tool

import (
	"errors"
	"fmt"
)

// Failure is an error the tool reports on stdout with its own judgement
// of whether running it again could help ("retryable": false
// fails the claim at once).
type Failure struct {
	// Msg says what went wrong and what to do about it.
	Msg string
	// Retryable is true for conditions that may pass (rate limits,
	// outages, timeouts), false for those that will not (a missing or
	// refused key, an answer that cannot be used).
	Retryable bool
	// Err is the cause, if any, for errors.Is and errors.As.
	Err error
}

// Error returns Msg.
func (f *Failure) Error() string { return f.Msg }

// Unwrap returns the cause.
func (f *Failure) Unwrap() error { return f.Err }

// Permanent returns a Failure that a retry will not cure.
func Permanent(format string, args ...any) *Failure {
	return &Failure{Msg: fmt.Sprintf(format, args...), Err: wrapped(args)}
}

// Transient returns a Failure that a later retry may cure.
func Transient(format string, args ...any) *Failure {
	return &Failure{Msg: fmt.Sprintf(format, args...), Retryable: true, Err: wrapped(args)}
}

// wrapped returns the first error among args, as %w would.
func wrapped(args []any) error {
	for _, a := range args {
		if err, ok := a.(error); ok {
			return err
		}
	}
	return nil
}

// AsFailure returns the Failure in err's chain.
func AsFailure(err error) (*Failure, bool) {
	var f *Failure
	ok := errors.As(err, &f)
	return f, ok
}

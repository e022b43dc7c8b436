package connect

import (
	"fmt"

	"github.com/settdev/sett/internal/config"
)

// NoNameError is returned by Resolve when sett.yml reaches an external
// Redis but nothing names the instance: not the caller, nor
// SETT_INSTANCE, nor sett.yml, nor an instance record.
type NoNameError struct {
	// Where is the Redis sett.yml names, without secrets.
	Where string
	// Hint says how the caller names an instance (Request.NameHint).
	Hint string
}

func (e *NoNameError) Error() string {
	msg := fmt.Sprintf("sett.yml reaches an external Redis (%s) but names no instance: set instance in sett.yml, or %s", e.Where, config.EnvInstance)
	if e.Hint != "" {
		msg += ", or " + e.Hint
	}
	return msg
}

// configError is a sett.yml that config.Load refused. With an instance
// record the record's URL still reaches the instance, so Resolve goes on;
// without one it is part of the explanation.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

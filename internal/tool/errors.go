package tool

import "errors"

// ErrInvalidOutput is matched (with errors.Is) by every *OutputError that
// ParseOutput returns: the tool printed something the cub cannot turn into an
// artefact.
var ErrInvalidOutput = errors.New("tool: invalid output")

// ErrUnknownClaimType is returned (wrapped) by ParseOutput when the caller
// passes a claim type that is not one of AllClaimTypes. It is a bug in the
// caller, not in the tool, so it is not an *OutputError.
var ErrUnknownClaimType = errors.New("tool: unknown claim type")

// OutputError says why a tool's stdout was refused. Reason is one or more
// sentences meant for the agent's author; it names the field at fault and
// what would have been accepted. Field is the top-level JSON field at fault,
// or "" when the document as a whole is wrong (empty, not JSON, not an
// object, more than one value).
//
// OutputError matches ErrInvalidOutput with errors.Is.
type OutputError struct {
	Field  string
	Reason string
}

// Error returns the reason with the package prefix.
func (e *OutputError) Error() string {
	return "tool: invalid output: " + e.Reason
}

// Is reports whether target is ErrInvalidOutput.
func (e *OutputError) Is(target error) bool {
	return target == ErrInvalidOutput
}

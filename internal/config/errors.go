package config

import (
	"errors"
	"fmt"
	"strings"
)

// ErrEmpty is returned (wrapped, naming the file) by Parse and Load when the file holds no YAML
// document at all (it is empty or only has comments).
var ErrEmpty = errors.New("config: file is empty")

// ErrMultipleDocuments is returned (wrapped, with the line where the second
// document starts) by Parse and Load when the file holds more than one YAML
// document (a second "---").
var ErrMultipleDocuments = errors.New("config: more than one YAML document")

// ErrSyntax is returned (wrapped, with file and line) by Parse and Load when
// the file is not well-formed YAML.
var ErrSyntax = errors.New("config: invalid YAML")

// ErrUnknownKey is matched by every FieldError that reports a key the schema
// does not know (a typo, or a key from another version).
var ErrUnknownKey = errors.New("config: unknown key")

// ErrType is matched by every FieldError that reports a value of the wrong
// type, such as a list where a string belongs, "5 seconds" for a duration,
// or a duplicate key.
var ErrType = errors.New("config: wrong type")

// ErrInvalid is matched by every FieldError that Validate returns: the value
// has the right type but breaks a rule (a range, a pattern, a set of allowed
// values).
var ErrInvalid = errors.New("config: invalid value")

// ErrEnv is returned (wrapped, naming the variable) by ApplyEnv when an
// environment variable holds a value that cannot be used.
var ErrEnv = errors.New("config: invalid environment variable")

// FieldError is one problem with one place in the configuration.
//
// File and Line locate it when it is known (Line is 1-based; 0 means
// unknown, as for a value that came from defaults or the environment). Path
// is the dotted path of the value at fault, such as
// agents.writer.workspace.mode, with list items as command[0]. Err is the
// category: ErrUnknownKey, ErrType or ErrInvalid; errors.Is matches it.
type FieldError struct {
	File    string
	Line    int
	Path    string
	Message string
	Err     error
}

// Error renders "file:line: path: message". Unknown-key errors name the
// enclosing section in the message and render as "file:line: message".
func (e FieldError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Path != "" && !errors.Is(e.Err, ErrUnknownKey) {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Unwrap returns the category sentinel.
func (e FieldError) Unwrap() error { return e.Err }

// ValidationError collects every problem found in one pass over a
// configuration, in file order. Parse returns one for unknown keys and wrong
// types; Validate returns one for broken rules. errors.Is matches the
// sentinel of any of its FieldErrors, and errors.As can extract a
// FieldError. It is only returned with at least one FieldError.
type ValidationError struct {
	Errors []FieldError
}

// Error renders a single problem on one line and several problems one per
// line under a count.
func (e *ValidationError) Error() string {
	if len(e.Errors) == 1 {
		return "config: " + e.Errors[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "config: %d problems:", len(e.Errors))
	for _, fe := range e.Errors {
		b.WriteString("\n  " + fe.Error())
	}
	return b.String()
}

// Unwrap returns the FieldErrors, so that errors.Is and errors.As look into
// each of them.
func (e *ValidationError) Unwrap() []error {
	errs := make([]error, len(e.Errors))
	for i, fe := range e.Errors {
		errs[i] = fe
	}
	return errs
}

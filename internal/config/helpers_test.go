package config

import (
	"errors"
	"strings"
	"testing"
)

// doc joins lines into a YAML document, so that tests can count lines.
func doc(lines ...string) []byte {
	return []byte(strings.Join(lines, "\n") + "\n")
}

// minimalLines is the smallest valid sett.yml; agents.writer starts at line 3.
var minimalLines = []string{
	`version: "1.0"`,
	`agents:`,
	`  writer:`,
	`    command: [sett-writer]`,
}

// withLines returns minimalLines followed by more.
func withLines(more ...string) []byte {
	return doc(append(append([]string(nil), minimalLines...), more...)...)
}

func mustParse(t testing.TB, data []byte) (*Config, []string) {
	t.Helper()
	cfg, warnings, err := Parse(data, "sett.yml")
	if err != nil {
		t.Fatalf("Parse:\n%s\nerror: %v", data, err)
	}
	return cfg, warnings
}

// fieldErrors extracts the FieldErrors of a *ValidationError.
func fieldErrors(t testing.TB, err error) []FieldError {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
	}
	return ve.Errors
}

// findFieldError returns the FieldError for path, failing the test when
// there is none.
func findFieldError(t testing.TB, err error, path string) FieldError {
	t.Helper()
	for _, fe := range fieldErrors(t, err) {
		if fe.Path == path {
			return fe
		}
	}
	t.Fatalf("no error for %s in:\n%v", path, err)
	return FieldError{}
}

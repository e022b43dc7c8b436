package tool

import (
	"slices"
	"strings"
)

// Redaction replaces a secret in everything a tool prints.
const Redaction = "[REDACTED]"

// minSecretLen is the shortest value treated as a secret: shorter values
// (a test key "x") would redact ordinary text.
const minSecretLen = 6

// Redactor removes secret values (API keys) from text. The zero value and
// a nil *Redactor redact nothing. It is safe for concurrent use once
// built.
type Redactor struct {
	secrets []string
}

// NewRedactor returns a Redactor for the given values; empty and short
// values are ignored.
func NewRedactor(values ...string) *Redactor {
	r := &Redactor{}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) >= minSecretLen && !slices.Contains(r.secrets, v) {
			r.secrets = append(r.secrets, v)
		}
	}
	// Longest first, so that a secret containing another is removed
	// whole.
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	return r
}

// Redact returns s with every secret replaced by Redaction.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, Redaction)
	}
	return s
}

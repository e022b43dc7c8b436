package answer

import (
	"strconv"
	"unicode/utf8"
)

// quoteLimit is how much of an unusable answer a ParseError quotes.
const quoteLimit = 600

// ParseError says why a model's answer cannot be used and quotes it.
type ParseError struct {
	// Reason says what was expected and what was wrong.
	Reason string
	// Answer is the model's text as received.
	Answer string
}

// Error returns the reason and the quoted answer (its first 600
// characters).
func (e *ParseError) Error() string {
	return e.Reason + "; the model answered: " + quote(e.Answer, quoteLimit)
}

// quote quotes at most n characters of s, marking a cut with "…" and the
// total length.
func quote(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return strconv.Quote(s)
	}
	r := []rune(s)
	return strconv.Quote(string(r[:n])) + "… (" + strconv.Itoa(len(r)) + " characters in all)"
}

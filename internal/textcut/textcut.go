// Package textcut shortens text for display and storage without breaking
// a character: summaries, reasons and payload excerpts are cut at a rune
// boundary and the cut is marked with "…", so a reader always sees that
// something was left out.
package textcut

import "unicode/utf8"

// Ellipsis marks a cut.
const Ellipsis = "…"

// Runes returns s when it has at most n runes, else its first n-1 runes
// followed by "…" (n runes in all); n < 1 gives "…" for a non-empty s.
func Runes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 1 {
		return Ellipsis
	}
	r := []rune(s)
	return string(r[:n-1]) + Ellipsis
}

// Bytes returns s when it has at most n bytes, else its longest prefix
// that ends at a rune boundary and leaves room for "…", followed by "…":
// never more than n bytes (but for n under the ellipsis' 3 bytes, when it
// is "…" alone), and always valid UTF-8 when s is.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(Ellipsis)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + Ellipsis
}

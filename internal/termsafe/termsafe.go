package termsafe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// String returns s with every character that a terminal would act on
// instead of printing replaced by a visible escape: C0 controls except
// newline and tab, DEL, C1 controls (U+0080–U+009F), bidirectional
// formatting characters, line and paragraph separators, and bytes that
// are not valid UTF-8 (a lone 0x9b is CSI on terminals in 8-bit mode).
// Escapes look like Go's: "\x1b", "\u202e". Text with nothing to replace
// is returned as it is, so String is cheap on clean text and idempotent.
func String(s string) string { return escape(s, true) }

// Line is String for text that must stay on one line: newlines and tabs
// are escaped too ("\n", "\t"), like every other control.
func Line(s string) string { return escape(s, false) }

// Safe reports whether s prints as it is: String(s) == s.
func Safe(s string) bool { return clean(s, true) }

func escape(s string, keepLayout bool) string {
	if clean(s, keepLayout) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unsafe(r, keepLayout):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// clean reports whether s has nothing to escape.
func clean(s string, keepLayout bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafe(rune(c), keepLayout) {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || unsafe(r, keepLayout) {
			return false
		}
		i += size
	}
	return true
}

// unsafe reports whether a terminal could act on r rather than print it.
func unsafe(r rune, keepLayout bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !keepLayout
	case r < 0x20, r == 0x7f:
		return true // C0 controls (ESC, BEL, CR, BS, …) and DEL
	case r >= 0x80 && r <= 0x9f:
		return true // C1 controls (CSI, OSC, ST, …)
	case r == 0x061c, r == 0x200e, r == 0x200f: // ALM, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

package vault

import (
	"fmt"
	"strings"
	"unicode"
)

// mdText makes s safe to put inline into Sett's Markdown (Dashboard.md,
// the bodies Sett writes): a name or payload never adds a line, a
// control character or terminal escape, or Markdown structure
// (emphasis, links, HTML, table cells, headings, quotes, lists). Line
// breaks and control characters become visible escapes (\n, \x1b, \u2028);
// Markdown punctuation gets a backslash, which every CommonMark renderer
// (Obsidian included) shows as the bare character.
func mdText(s string) string {
	var b strings.Builder
	// "1." or "1)" at the start would begin an ordered list.
	digits := len(s) - len(strings.TrimLeft(s, "0123456789"))
	for i, r := range s {
		switch {
		case digits > 0 && i == digits && (r == '.' || r == ')'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.In(r, unicode.Zl, unicode.Zp) || isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case strings.ContainsRune("\\`*_[]<>|~!&", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case i == 0 && strings.ContainsRune("#>-+=", r):
			// Would start a heading, quote or list item where the text
			// begins a line or a list item.
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isBidi reports the Unicode bidirectional controls, which reorder what
// a reader sees (CVE-2021-42574).
func isBidi(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069') || r == '\u200E' || r == '\u200F' || r == '\u061C'
}

package memory

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// oneLine folds s into a single line: control characters become spaces,
// runs of white space (line breaks included) become one space, and the ends
// are trimmed. Memories are rendered as Markdown lines, so a value must
// never add a line of its own.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	return strings.Join(strings.Fields(s), " ")
}

// cut shortens s to at most n characters, ending a cut string in "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRightFunc(string(r[:n-1]), unicode.IsSpace) + "…"
}

// escapeCell makes s safe inside a Markdown table cell.
func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

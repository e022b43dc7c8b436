package termsafe

import (
	"io"
	"unicode/utf8"
)

// Writer escapes everything written through it with String before passing
// it on, for streams of untrusted text such as `sett logs`. A character
// split across two writes is held back until its last byte arrives, so
// escaping does not depend on how the stream is chunked. Not safe for
// concurrent use.
type Writer struct {
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer that writes the escaped text to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it. It reports len(p) on success; errors are
// those of the underlying writer.
func (t *Writer) Write(p []byte) (int, error) {
	buf := append(t.pending, p...)
	cut := completePrefix(buf)
	t.pending = append([]byte(nil), buf[cut:]...)
	if cut == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(t.w, String(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes out a held-back incomplete character (escaped as the
// invalid bytes it is). Call it when the stream ends.
func (t *Writer) Flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	_, err := io.WriteString(t.w, String(string(t.pending)))
	t.pending = nil
	return err
}

// completePrefix returns the length of b without a trailing incomplete
// UTF-8 sequence (at most utf8.UTFMax-1 bytes that could still become a
// valid character).
func completePrefix(b []byte) int {
	for back := 1; back < utf8.UTFMax && back <= len(b); back++ {
		c := b[len(b)-back]
		if c < utf8.RuneSelf {
			return len(b) // ASCII: nothing pending
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-back:]) {
				return len(b) - back
			}
			return len(b)
		}
	}
	return len(b)
}

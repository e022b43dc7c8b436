package cli

import (
	"bytes"
	"io"
)

// tailWriter keeps the last n lines written to it and writes them out on
// Flush: `sett logs --tail N` over a runtime that streams the whole log.
// Memory stays bounded by n lines. Not safe for concurrent use.
type tailWriter struct {
	n     int
	lines [][]byte // a ring of complete lines
	next  int
	full  bool
	part  []byte // the unterminated end of what was written
}

func newTailWriter(n int) *tailWriter { return &tailWriter{n: n, lines: make([][]byte, n)} }

func (t *tailWriter) Write(p []byte) (int, error) {
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			t.part = append(t.part, rest...)
			break
		}
		line := append(t.part, rest[:i+1]...)
		t.part = nil
		t.lines[t.next] = append(t.lines[t.next][:0], line...)
		t.next = (t.next + 1) % t.n
		if t.next == 0 {
			t.full = true
		}
		rest = rest[i+1:]
	}
	return len(p), nil
}

// Flush writes the kept lines, oldest first, and an unterminated last line
// if there is one (it counts as one of the n).
func (t *tailWriter) Flush(w io.Writer) error {
	var out [][]byte
	if t.full {
		out = append(out, t.lines[t.next:]...)
	}
	out = append(out, t.lines[:t.next]...)
	if len(t.part) > 0 {
		out = append(out, t.part)
		if len(out) > t.n {
			out = out[1:]
		}
	}
	for _, l := range out {
		if _, err := w.Write(l); err != nil {
			return err
		}
	}
	return nil
}

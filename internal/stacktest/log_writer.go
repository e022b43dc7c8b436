package stacktest

import (
	"io"
	"strings"
	"testing"
)

// LogWriter returns a writer that sends each write, less its trailing
// newline, to tb's log: for a harness's progress lines (bench, chaos).
func LogWriter(tb testing.TB) io.Writer { return logWriter{tb} }

type logWriter struct{ tb testing.TB }

func (l logWriter) Write(b []byte) (int, error) {
	l.tb.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// logFilter is the io.Writer between a component's log and the terminal
// in `sett logs`: it keeps the lines that pass --since, --workflow and
// --level, and renders the daemons' JSON lines for people (text) or
// passes them on as they are (json). Lines that are not JSON (Redis's own
// log) pass unchanged, unless a filter needs a field they cannot have.
// Not safe for concurrent use.
type logFilter struct {
	out      io.Writer
	text     bool
	sinceMs  int64  // 0: no bound
	workflow string // a workflow id or prefix; "" keeps all
	level    zerolog.Level
	console  zerolog.ConsoleWriter
	partial  []byte
}

func newLogFilter(out io.Writer, text bool, sinceMs int64, workflow string, level zerolog.Level) *logFilter {
	return &logFilter{out: out, text: text, sinceMs: sinceMs, workflow: strings.ToLower(workflow), level: level,
		// No colour: the output goes through termsafe, which escapes
		// control sequences (log fields carry tool output).
		console: zerolog.ConsoleWriter{Out: out, NoColor: true, TimeFormat: "2006-01-02 15:04:05.000"}}
}

// Write filters and renders every complete line of p; a line's end may
// come in a later Write.
func (f *logFilter) Write(p []byte) (int, error) {
	data := append(f.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		if err := f.line(data[:i+1]); err != nil {
			return len(p), err
		}
		data = data[i+1:]
	}
	f.partial = append([]byte(nil), data...)
	return len(p), nil
}

// Flush handles a last line without its newline.
func (f *logFilter) Flush() error {
	if len(f.partial) == 0 {
		return nil
	}
	line := append(f.partial, '\n')
	f.partial = nil
	return f.line(line)
}

// logFields are the fields the filters read.
type logFields struct {
	Level      string `json:"level"`
	Time       string `json:"time"`
	WorkflowID string `json:"workflow_id"`
}

func (f *logFilter) line(line []byte) error {
	var fields logFields
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &fields) != nil {
		if f.workflow != "" || f.sinceMs > 0 || f.level > zerolog.DebugLevel {
			return nil // not a daemon's line: nothing to filter it by
		}
		_, err := f.out.Write(line)
		return err
	}
	if lvl, err := zerolog.ParseLevel(fields.Level); err == nil && fields.Level != "" && lvl < f.level {
		return nil
	}
	if f.workflow != "" && !strings.HasPrefix(fields.WorkflowID, f.workflow) {
		return nil
	}
	if f.sinceMs > 0 {
		t, err := time.Parse(time.RFC3339Nano, fields.Time)
		if err != nil || t.UnixMilli() < f.sinceMs {
			return nil
		}
	}
	if !f.text {
		_, err := f.out.Write(line)
		return err
	}
	_, err := f.console.Write(trimmed)
	return err
}

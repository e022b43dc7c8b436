package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestLogFilter(t *testing.T) {
	lines := []string{
		`{"level":"debug","time":"2026-01-01T10:00:00Z","message":"tick"}`,
		`{"level":"info","time":"2026-01-01T10:00:01Z","component":"work_runner","workflow_id":"abcd1234-0000","message":"running tool"}`,
		`{"level":"warn","time":"2026-01-01T10:05:00Z","workflow_id":"ffff0000-1111","summary":"exit_nonzero: exit status 1","message":"result written"}`,
		`1:M 01 Jan 2026 10:00:00.000 * Ready to accept connections tcp`,
	}
	input := strings.Join(lines, "\n") + "\n"
	since := time.Date(2026, 1, 1, 10, 1, 0, 0, time.UTC).UnixMilli()
	tests := []struct {
		name     string
		text     bool
		sinceMs  int64
		workflow string
		level    zerolog.Level
		want     []string // substrings of the output, in order
		absent   []string
	}{
		{name: "json passes everything as logged", want: lines},
		{name: "text renders the daemons' lines", text: true,
			want:   []string{"2026-01-01 10:00:01.000 INF running tool component=work_runner workflow_id=abcd1234-0000", "WRN result written", "Ready to accept connections"},
			absent: []string{`{"level"`}},
		{name: "level", level: zerolog.InfoLevel, want: lines[1:3], absent: []string{"tick", "Ready"}},
		{name: "workflow prefix", workflow: "ABCD", want: lines[1:2], absent: []string{"tick", "ffff", "Ready"}},
		{name: "since", sinceMs: since, want: lines[2:3], absent: []string{"tick", "running tool", "Ready"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			f := newLogFilter(&b, tt.text, tt.sinceMs, tt.workflow, tt.level)
			// Split mid-line: a line's end may come with a later write.
			for _, part := range []string{input[:50], input[50:]} {
				if _, err := f.Write([]byte(part)); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.Flush(); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			rest := out
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q (in order):\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
			for _, a := range tt.absent {
				if strings.Contains(out, a) {
					t.Errorf("output has %q:\n%s", a, out)
				}
			}
		})
	}
}

package tool

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestFailureReport(t *testing.T) {
	longTail := "\x80\x80" + strings.Repeat("é", 2000) + "\n" // cut inside a character
	tests := []struct {
		name   string
		result Result
		cmd    []string
		want   []string
	}{
		{
			name: "exit status with tails",
			result: Result{
				ExitCode: 3, Failure: FailureExitNonzero, Detail: "exit status 3", Duration: 1234567 * time.Microsecond,
				StdoutTail: []byte("not json \xff"), StdoutBytes: 10,
				StderrTail: []byte(longTail), StderrBytes: 50000,
			},
			cmd: []string{"/usr/bin/tool", "--flag", "two words", "", "it's"},
			want: []string{
				"Tool execution failed: exit status 3\n",
				`command:     /usr/bin/tool --flag 'two words' '' 'it'\''s'` + "\n",
				"failure:     exit_nonzero\n",
				"detail:      exit status 3\n",
				"exit code:   3\n",
				"duration:    1.235s\n",
				"stdout:      10 bytes\n",
				"stderr:      50000 bytes\n",
				"--- stdout: all 10 bytes ---\nnot json \uFFFD\n--- end of stdout ---\n",
				"--- stderr: last 4001 of 50000 bytes ---\néé",
				"é\n--- end of stderr ---\n",
			},
		},
		{
			name:   "start failure",
			result: Result{ExitCode: -1, Failure: FailureStartFailed, Detail: `cannot start: executable "x" not found`},
			cmd:    []string{"x"},
			want: []string{
				"exit code:   none (the process did not start)\n",
				"--- stdout: empty ---\n--- stderr: empty ---\n",
			},
		},
		{
			name:   "timeout",
			result: Result{ExitCode: -1, Failure: FailureTimeout, Detail: "killed after timeout of 2s", Duration: 2 * time.Second},
			want: []string{
				"Tool execution failed: killed after timeout of 2s\n",
				"command:     (none)\n",
				"failure:     timeout\n",
				"exit code:   none (the process did not exit on its own)\n",
			},
		},
		{
			name:   "successful run whose output was refused",
			result: Result{StdoutTail: []byte("hello"), StdoutBytes: 5},
			cmd:    []string{"tool"},
			want:   []string{"The tool exited normally, but its output was refused.\n", "failure:     none\n", "exit code:   0\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report := FailureReport(tt.result, tt.cmd)
			for _, want := range tt.want {
				if !strings.Contains(report, want) {
					t.Errorf("report\n%s\nlacks %q", report, want)
				}
			}
			if !utf8.ValidString(report) {
				t.Errorf("report is not valid UTF-8: %q", report)
			}
			if strings.Contains(report, "\uFFFD\uFFFD") {
				t.Errorf("report shows the cut character as replacement characters:\n%s", report)
			}
		})
	}
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{name: "nothing", writes: nil, want: ""},
		{name: "small writes", writes: []string{"ab", "cd"}, want: "abcd"},
		{name: "one write larger than the tail", writes: []string{"x" + strings.Repeat("y", tailSize)}, want: strings.Repeat("y", tailSize)},
		{name: "many writes roll over", writes: []string{strings.Repeat("a", tailSize-1), "bc", "d"}, want: strings.Repeat("a", tailSize-3) + "bcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tb tailBuffer
			for _, w := range tt.writes {
				tb.write([]byte(w))
			}
			if got := string(tb.bytes()); got != tt.want {
				t.Errorf("tail = %d bytes %.20q…, want %d bytes %.20q…", len(got), got, len(tt.want), tt.want)
			}
			if cap(tb.buf) > 2*tailSize {
				t.Errorf("tail buffer grew to %d bytes", cap(tb.buf))
			}
		})
	}
}

func TestStreamCaptureLimit(t *testing.T) {
	calls := 0
	c := newStreamCapture(10, func() { calls++ })
	for _, w := range []string{"12345", "67890", "a", "bcdef"} {
		c.write([]byte(w))
	}
	if string(c.data) != "1234567890" || c.total != 16 || !c.exceeded || calls != 1 {
		t.Errorf("capture kept %q of %d bytes, exceeded %v, limitFunc called %d times; want the first 10 of 16, once",
			c.data, c.total, c.exceeded, calls)
	}
	if string(c.tail.bytes()) != "1234567890abcdef" {
		t.Errorf("tail = %q, want every byte", c.tail.bytes())
	}
}

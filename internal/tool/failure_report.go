package tool

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// FailureReport renders r as the multi-line, human-readable payload of a
// ToolExecutionFailure artefact: the command (shell-quoted), the failure kind
// and detail, the exit code, the duration, the byte counts and the labelled
// tails of stdout and stderr. The tails are made valid UTF-8 (invalid bytes
// become U+FFFD), so the report is safe to store and display.
//
// It renders a successful Result too (failure "none"), which lets the cub
// describe a run whose output ParseOutput refused.
func FailureReport(r Result, cmd []string) string {
	var b strings.Builder
	kind := string(r.Failure)
	if kind == "" {
		kind = "none"
	}
	if r.Detail != "" {
		fmt.Fprintf(&b, "Tool execution failed: %s\n", r.Detail)
	} else {
		b.WriteString("The tool exited normally, but its output was refused.\n")
	}
	fmt.Fprintf(&b, "command:     %s\n", shellJoin(cmd))
	fmt.Fprintf(&b, "failure:     %s\n", kind)
	if r.Detail != "" {
		fmt.Fprintf(&b, "detail:      %s\n", r.Detail)
	}
	fmt.Fprintf(&b, "exit code:   %s\n", exitCodeText(r))
	fmt.Fprintf(&b, "duration:    %s\n", r.Duration.Round(time.Millisecond))
	fmt.Fprintf(&b, "stdout:      %d bytes\n", r.StdoutBytes)
	fmt.Fprintf(&b, "stderr:      %d bytes\n", r.StderrBytes)
	writeTail(&b, "stdout", r.StdoutTail, r.StdoutBytes)
	writeTail(&b, "stderr", r.StderrTail, r.StderrBytes)
	return b.String()
}

func exitCodeText(r Result) string {
	switch {
	case r.Failure == FailureStartFailed:
		return "none (the process did not start)"
	case r.ExitCode < 0:
		return "none (the process did not exit on its own)"
	default:
		return fmt.Sprint(r.ExitCode)
	}
}

// writeTail writes one labelled tail. total is the number of bytes the
// stream produced, so the label says whether the tail is all of it.
func writeTail(b *strings.Builder, name string, tail []byte, total int64) {
	if len(tail) == 0 {
		fmt.Fprintf(b, "--- %s: empty ---\n", name)
		return
	}
	if int64(len(tail)) < total {
		// The tail was cut from a longer stream and may begin inside a
		// UTF-8 sequence; drop that fragment rather than show U+FFFD.
		for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
			tail = tail[1:]
		}
		fmt.Fprintf(b, "--- %s: last %d of %d bytes ---\n", name, len(tail), total)
	} else {
		fmt.Fprintf(b, "--- %s: all %d bytes ---\n", name, len(tail))
	}
	text := strings.ToValidUTF8(string(tail), "\uFFFD")
	b.WriteString(text)
	if !strings.HasSuffix(text, "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "--- end of %s ---\n", name)
}

// shellJoin renders argv so that it can be pasted into a POSIX shell.
func shellJoin(argv []string) string {
	if len(argv) == 0 {
		return "(none)"
	}
	quoted := make([]string, len(argv))
	for i, arg := range argv {
		quoted[i] = shellQuote(arg)
	}
	return strings.ToValidUTF8(strings.Join(quoted, " "), "\uFFFD")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:=@%+,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

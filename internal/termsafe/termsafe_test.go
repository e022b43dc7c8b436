package termsafe

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "plain text is kept", in: "hello, wörld ✓", want: "hello, wörld ✓"},
		{name: "newline and tab are kept", in: "a\n\tb", want: "a\n\tb"},
		{name: "clear screen", in: "x\x1b[2Jy", want: `x\x1b[2Jy`},
		{name: "OSC 52 clipboard write with BEL", in: "\x1b]52;c;aGk=\x07", want: `\x1b]52;c;aGk=\x07`},
		{name: "carriage return", in: "safe\roverwritten", want: `safe\roverwritten`},
		{name: "backspace and DEL", in: "a\bb\x7f", want: `a\x08b\x7f`},
		{name: "C1 CSI as a rune", in: "a\u009b2Jb", want: `a\x9b2Jb`},
		{name: "raw 0x9b byte (invalid UTF-8)", in: "a\x9b2Jb", want: `a\x9b2Jb`},
		{name: "bidi override", in: "abc\u202edcba\u202c", want: `abc\u202edcba\u202c`},
		{name: "bidi isolate", in: "\u2067x\u2069", want: `\u2067x\u2069`},
		{name: "line separator", in: "a\u2028b", want: `a\u2028b`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if got != tt.want {
				t.Fatalf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if String(got) != got {
				t.Fatalf("String is not idempotent on %q", got)
			}
			if !Safe(got) {
				t.Fatalf("Safe(%q) = false after escaping", got)
			}
			if strings.ContainsRune(got, 0x1b) {
				t.Fatalf("ESC survived in %q", got)
			}
		})
	}
}

func TestLine(t *testing.T) {
	if got, want := Line("a\nb\tc\x1b"), `a\nb\tc\x1b`; got != want {
		t.Fatalf("Line = %q, want %q", got, want)
	}
	if got := Line("plain"); got != "plain" {
		t.Fatalf("Line(plain) = %q", got)
	}
}

func TestSafe(t *testing.T) {
	if !Safe("ok\n") || Safe("\x1b") || Safe("\xff") {
		t.Fatal("Safe misjudges")
	}
}

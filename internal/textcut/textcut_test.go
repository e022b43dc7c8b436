package textcut

import (
	"testing"
	"unicode/utf8"
)

func TestRunes(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 5, ""},
		{"short", 5, "short"},
		{"longer", 5, "long…"},
		{"héllo wörld", 6, "héllo…"},
		{"日本語のテキスト", 4, "日本語…"},
		{"ab", 1, "…"},
		{"ab", 0, "…"},
	} {
		if got := Runes(c.s, c.n); got != c.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 5, "short"},
		{"longer text", 8, "longe…"},
		// "é" is 2 bytes: a cut inside it moves back to its start.
		{"aébcd", 5, "a…"},
		{"日本語", 8, "日…"},
		{"日本語", 2, "…"},
	} {
		got := Bytes(c.s, c.n)
		if got != c.want {
			t.Errorf("Bytes(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Bytes(%q, %d) = %q is not valid UTF-8", c.s, c.n, got)
		}
		if len(got) > c.n && got != Ellipsis {
			t.Errorf("Bytes(%q, %d) = %q has %d bytes", c.s, c.n, got, len(got))
		}
	}
}

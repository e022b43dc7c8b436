package cli

import (
	"bytes"
	"testing"
)

func TestTailWriter(t *testing.T) {
	cases := []struct {
		name   string
		n      int
		writes []string
		want   string
	}{
		{"fewer lines than asked", 5, []string{"a\nb\n"}, "a\nb\n"},
		{"the last lines", 2, []string{"a\nb\nc\nd\n"}, "c\nd\n"},
		{"lines split across writes", 2, []string{"a\nb", "b\nc", "c\n"}, "bb\ncc\n"},
		{"an unterminated last line counts", 2, []string{"a\nb\nc"}, "b\nc"},
		{"exactly n", 3, []string{"a\nb\nc\n"}, "a\nb\nc\n"},
		{"nothing", 3, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tw := newTailWriter(tc.n)
			for _, w := range tc.writes {
				if _, err := tw.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			var b bytes.Buffer
			if err := tw.Flush(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
}

package jsonkind

import "testing"

func TestOf(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{``, "nothing"},
		{" \t\r\n", "nothing"},
		{`{"a":1}`, "object"},
		{"\n  [1,2]", "array"},
		{`"text"`, "string"},
		{`true`, "boolean"},
		{`false`, "boolean"},
		{`null`, "null"},
		{`-1.5e3`, "number"},
		{`0`, "number"},
	} {
		if got := Of([]byte(tc.raw)); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

package termsafe

import (
	"bytes"
	"testing"
)

func TestWriterEscapesAcrossChunks(t *testing.T) {
	in := []byte("ok ✓ \x1b[2J \u202e end\n")
	want := String(string(in))
	// Every way of splitting the input in two gives the same output.
	for i := 0; i <= len(in); i++ {
		var out bytes.Buffer
		w := NewWriter(&out)
		if _, err := w.Write(in[:i]); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(in[i:]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("split at %d: got %q, want %q", i, out.String(), want)
		}
	}
}

func TestWriterFlushesATruncatedCharacter(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	_, _ = w.Write([]byte("a\xe2\x9c"))
	if out.String() != "a" {
		t.Fatalf("before Flush: %q", out.String())
	}
	_ = w.Flush()
	if out.String() != `a\xe2\x9c` {
		t.Fatalf("after Flush: %q", out.String())
	}
}

package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/syncbuf"
)

func TestTailLinesReturnsTheLastLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	var b strings.Builder
	for i := 1; i <= 50; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got := tailLines(path, 3)
	if got != "line 48\nline 49\nline 50" {
		t.Errorf("tail = %q", got)
	}
	if got := tailLines(filepath.Join(t.TempDir(), "missing.log"), 3); !strings.HasPrefix(got, "(no log:") {
		t.Errorf("missing file: %q", got)
	}
}

func TestCopyLogFollowsAppendedLinesUntilCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	if err := os.WriteFile(path, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- copyLog(ctx, path, &out, true) }()

	eventually.True(t, 10*time.Second, "the existing line", func() bool { return out.String() == "first\n" })
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "second")
	f.Close()
	eventually.True(t, 10*time.Second, "the appended line", func() bool { return out.String() == "first\nsecond\n" })

	// A truncated file is followed from its new start.
	if err := os.WriteFile(path, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 10*time.Second, "the line after truncation", func() bool { return strings.HasSuffix(out.String(), "second\nnew\n") })

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("copyLog after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("copyLog kept following after its context ended")
	}
}

func TestCopyLogWithoutFollowReturnsAtTheEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := copyLog(context.Background(), path, &out, false); err != nil {
		t.Fatal(err)
	}
	if out.String() != "a\nb\n" {
		t.Errorf("copied %q", out.String())
	}
}

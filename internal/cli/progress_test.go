package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/runtime"
)

func TestProgressPlainPrintsALinePerStateChange(t *testing.T) {
	var b bytes.Buffer
	v := newProgressView(&b, false, outputStyle{})
	for _, p := range []runtime.Progress{
		{Component: "redis", State: "starting"},
		{Component: "writer", State: "starting"},
		{Component: "writer", State: "waiting", Detail: "/readyz: connection refused"},
		{Component: "writer", State: "waiting", Detail: "/readyz answered 503"}, // same state: no line
		{Component: "redis", State: "ready", Detail: "127.0.0.1:6379"},
		{Component: "writer", State: "ready", Detail: "127.0.0.1:8081"},
	} {
		v.Update(p)
	}
	want := strings.Join([]string{
		"  redis         starting",
		"  writer        starting",
		"  writer        waiting   /readyz: connection refused",
		"  redis         ready     127.0.0.1:6379",
		"  writer        ready     127.0.0.1:8081",
	}, "\n") + "\n"
	if b.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", b.String(), want)
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Error("plain output holds escape sequences")
	}
}

func TestProgressLiveRedrawsEveryLineInPlace(t *testing.T) {
	var b bytes.Buffer
	v := newProgressView(&b, true, outputStyle{color: true})
	v.Update(runtime.Progress{Component: "redis", State: "starting"})
	v.Update(runtime.Progress{Component: "orchestrator", State: "starting"})
	b.Reset()
	v.Update(runtime.Progress{Component: "redis", State: "ready", Detail: strings.Repeat("x", 100)})

	out := b.String()
	// Back up over the two lines drawn before, then draw both again.
	if !strings.HasPrefix(out, "\x1b[2A") {
		t.Errorf("redraw does not move the cursor up two lines: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("redraw wrote %d lines, want 2: %q", len(lines), out)
	}
	if !strings.Contains(lines[0], "\r\x1b[2K  redis") || !strings.Contains(lines[0], "\x1b[32m✓ ready") {
		t.Errorf("redis line = %q, want a cleared line with a green ready mark", lines[0])
	}
	if !strings.Contains(lines[0], strings.Repeat("x", progressDetailMax-1)+"…") || strings.Contains(lines[0], strings.Repeat("x", progressDetailMax)) {
		t.Errorf("long detail not cut to %d characters: %q", progressDetailMax, lines[0])
	}
	if !strings.Contains(lines[1], "orchestrator") || !strings.Contains(lines[1], "\x1b[33m… starting") {
		t.Errorf("orchestrator line = %q", lines[1])
	}
}

func TestProgressLiveWithoutColour(t *testing.T) {
	var b bytes.Buffer
	v := newProgressView(&b, true, outputStyle{})
	v.Update(runtime.Progress{Component: "writer", State: "failed", Detail: "exited"})
	if strings.Contains(b.String(), "\x1b[3") || !strings.Contains(b.String(), "✗ failed") {
		t.Errorf("output %q: want the failed mark without colour", b.String())
	}
}

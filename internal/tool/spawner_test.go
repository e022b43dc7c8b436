//go:build linux

package tool

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Tools run one after the other reuse one spawner thread: a busy agent
// does not create (and end) an OS thread per tool. Not parallel, so no
// other test's tool takes the idle spawner in between.
func TestSequentialRunsReuseOneSpawner(t *testing.T) {
	before := spawnersStarted.Load()
	for i := 0; i < 10; i++ {
		s := fixtureSpec(t, "echo-stdin")
		s.Stdin = []byte(`{"artefact_type":"Plan","artefact_payload":"x","summary":"x"}`)
		if r := runBounded(t, t.Context(), s); r.Failure != "" {
			t.Fatalf("run %d failed: %s (%s)", i, r.Failure, r.Detail)
		}
	}
	if n := spawnersStarted.Load() - before; n > 1 {
		t.Errorf("10 sequential runs started %d spawner threads, want at most 1", n)
	}
}

// A tool that runs does not hold up the start of another: each running
// tool has a spawner of its own.
func TestRunningToolDoesNotHoldUpTheNext(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ready")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	slow := make(chan Result, 1)
	go func() { slow <- Run(ctx, fixtureSpec(t, "hang-fifo", fifo)) }()
	// Reading the FIFO returns once the tool wrote to it: it is running.
	if b, err := os.ReadFile(fifo); err != nil || string(b) != "ready\n" {
		t.Fatalf("the first tool did not get ready: %q, %v", b, err)
	}
	fast := fixtureSpec(t, "echo-stdin")
	fast.Stdin = []byte(`{}`)
	if r := runBounded(t, t.Context(), fast); r.Failure != "" {
		t.Fatalf("the second tool failed: %s (%s)", r.Failure, r.Detail)
	}
	select {
	case r := <-slow:
		t.Fatalf("the first tool ended before it was stopped: %s (%s)", r.Failure, r.Detail)
	default:
	}
	cancel()
	if r := <-slow; r.Failure != FailureCanceled {
		t.Errorf("the first tool ended with %q (%s), want %q", r.Failure, r.Detail, FailureCanceled)
	}
}

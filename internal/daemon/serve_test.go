package daemon

import (
	"context"
	"errors"
	"testing"

	"github.com/settdev/sett/internal/observability"
)

// TestServeStopsItsTasksWithRun: when run returns (here with an error,
// while the daemon's context still lives), Serve stops the background
// tasks and the server, waits for them, and returns run's error.
func TestServeStopsItsTasksWithRun(t *testing.T) {
	srv := observability.NewServer("127.0.0.1:0")
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	want := errors.New("run failed")
	stopped := make(chan struct{}, 2)
	task := func(ctx context.Context) { <-ctx.Done(); stopped <- struct{}{} }
	err := Serve(context.Background(), srv, func(context.Context) error { return want }, task, task)
	if !errors.Is(err, want) {
		t.Fatalf("Serve = %v, want run's error", err)
	}
	if n := len(stopped); n != 2 {
		t.Fatalf("%d of 2 background tasks had stopped when Serve returned", n)
	}
}

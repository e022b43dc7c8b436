// Command sett-worker is the tool of controller-mode agents: the cub runs
// it once per grant, and it runs the real tool in a fresh worker container
// (package worker) and exits with the tool's exit code.
//
//	sett-worker --image IMAGE [flags] -- COMMAND [ARGS...]
//
// Exit codes: the worker's own; 125 when the worker could not be run
// (bad flags, no Docker, missing image); 143 when stopped by SIGTERM.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/settdev/sett/internal/worker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx))
}

func run(ctx context.Context) int {
	spec, err := worker.ParseArgs(os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-worker:", err)
		return worker.ExitLauncherFailed
	}
	l, err := worker.NewLauncher(spec, os.Environ(), os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-worker:", err)
		return worker.ExitLauncherFailed
	}
	defer l.Close()
	if n, err := l.RemoveLeftovers(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "sett-worker:", err)
	} else if n > 0 {
		fmt.Fprintf(os.Stderr, "sett-worker: removed %d worker container(s) left by a launcher that was killed\n", n)
	}
	code, err := l.Run(ctx)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "sett-worker:", err)
	}
	return code
}

// Command sett-worker is the tool of controller-mode agents: the cub runs
// it once per grant, and it runs the real tool in a fresh worker container
// (package worker) and exits with the tool's exit code.
//
//	sett-worker --image IMAGE [flags] -- COMMAND [ARGS...]
//	sett-worker sweep --label k=v [...] -- PROGRAM [ARGS...]
//	sett-worker reap --container ID   (fd 3: the lease deadlines)
//
// The second form removes the workers that killed launchers left behind,
// then execs PROGRAM (the Docker runtime starts controller containers with
// it, the cub as PROGRAM). The third is the lease reaper a launcher starts
// for each worker when the cub hands it the lease (SETT_LEASE_FD): it
// removes the worker when the lease lapses, even after the launcher died.
//
// Exit codes: the worker's own; 125 when the worker could not be run
// (bad flags, no Docker, missing image); 143 when stopped by SIGTERM.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/settdev/sett/internal/worker"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == worker.SweepCommand {
		os.Exit(sweep(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == worker.ReapCommand {
		os.Exit(reap(os.Args[2:]))
	}
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
	// The cub hands its lease deadlines to an unsandboxed tool: each
	// worker gets a reaper that removes it when the lease lapses.
	if fd, err := strconv.Atoi(os.Getenv(worker.EnvLeaseFD)); err == nil && fd > 2 {
		l.Lease = os.NewFile(uintptr(fd), "lease-deadline")
	}
	removeLeftovers(ctx, l)
	code, err := l.Run(ctx)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "sett-worker:", err)
	}
	return code
}

// sweep removes leftovers, then becomes the program it was given. A sweep
// that fails does not keep the program from starting: each launcher sweeps
// again before it creates a worker.
func sweep(args []string) int {
	s, err := worker.ParseSweepArgs(args, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-worker:", err)
		return worker.ExitLauncherFailed
	}
	l, err := worker.NewLauncher(worker.Spec{Labels: s.Labels, DockerHost: s.DockerHost}, nil, nil, nil, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-worker:", err)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		removeLeftovers(ctx, l)
		cancel()
		_ = l.Close()
	}
	err = syscall.Exec(s.Exec[0], s.Exec, os.Environ())
	fmt.Fprintf(os.Stderr, "sett-worker: exec %s: %v\n", s.Exec[0], err)
	return worker.ExitLauncherFailed
}

// reap is the lease reaper of one worker (worker.ReapCommand): it watches
// the deadlines on fd 3 and removes the worker when the last one passes.
func reap(args []string) int {
	r, err := worker.ParseReapArgs(args, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-worker:", err)
		return worker.ExitLauncherFailed
	}
	l, err := worker.NewLauncher(worker.Spec{DockerHost: r.DockerHost}, nil, nil, nil, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-worker:", err)
		return worker.ExitLauncherFailed
	}
	defer l.Close()
	worker.WatchLease(context.Background(), l.Client, r.Container, os.NewFile(3, "lease-deadline"), os.Stderr)
	return 0
}

func removeLeftovers(ctx context.Context, l *worker.Launcher) {
	if n, err := l.RemoveLeftovers(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "sett-worker:", err)
	} else if n > 0 {
		fmt.Fprintf(os.Stderr, "sett-worker: removed %d worker container(s) left by a launcher that was killed\n", n)
	}
}

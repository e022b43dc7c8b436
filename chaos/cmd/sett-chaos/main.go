// Command sett-chaos runs the chaos campaign (`make chaos`) and prints its
// table. It exits 1 when an invariant broke, 2 when the campaign could not
// run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/settdev/sett/chaos"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx))
}

func run(ctx context.Context) int {
	opts, err := chaos.DefaultOptions().FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	flag.IntVar(&opts.Workflows, "workflows", opts.Workflows, "goals to post (env CHAOS_WORKFLOWS)")
	flag.IntVar(&opts.Faults, "faults", opts.Faults, "faults to inject (env CHAOS_FAULTS)")
	flag.Int64Var(&opts.Seed, "seed", opts.Seed, "seed of the fault kinds and timing (env CHAOS_SEED)")
	flag.DurationVar(&opts.Drain, "drain", opts.Drain, "longest wait for every workflow to end after the last fault")
	flag.BoolVar(&opts.KeepWorkDir, "keep", false, "keep the work directory (logs, Redis data, stamps)")
	flag.Parse()
	opts.Progress = os.Stderr
	rep, err := chaos.Run(ctx, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-chaos:", err)
		return 2
	}
	if err := rep.WriteTable(os.Stdout); err != nil {
		return 2
	}
	if !rep.OK() {
		return 1
	}
	return 0
}

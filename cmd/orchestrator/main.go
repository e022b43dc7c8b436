// Command sett-orchestrator is Sett's coordination daemon.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/settdev/sett/internal/daemon"
	"github.com/settdev/sett/internal/daemon/orchestratord"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == daemon.HealthcheckArg {
		os.Exit(daemon.HealthcheckMain(os.Stderr, ":8080")) // the compose stack's healthcheck
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := orchestratord.Run(ctx, os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-orchestrator:", err)
	}
	os.Exit(daemon.ExitCode(err))
}

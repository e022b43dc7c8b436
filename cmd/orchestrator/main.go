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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := orchestratord.Run(ctx, os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-orchestrator:", err)
	}
	os.Exit(daemon.ExitCode(err))
}

// Command sett-cub is the sidecar entrypoint of every agent container.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/settdev/sett/internal/daemon"
	"github.com/settdev/sett/internal/daemon/cubd"
	"github.com/settdev/sett/internal/tool"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == tool.SandboxArg {
		os.Exit(tool.SandboxMain(os.Args[2:])) // the cub re-executed as a tool's sandbox helper
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := cubd.Run(ctx, os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett-cub:", err)
	}
	os.Exit(daemon.ExitCode(err))
}

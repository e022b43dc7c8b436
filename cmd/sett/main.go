// Command sett is the command-line interface of Sett.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/settdev/sett/internal/cli"
	"github.com/settdev/sett/internal/termsafe"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := cli.NewApp(cli.DefaultRuntimes())
	err := cli.NewRoot(app).ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sett:", termsafe.String(err.Error()))
	}
	os.Exit(cli.ExitCode(err))
}

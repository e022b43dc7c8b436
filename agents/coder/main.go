// Command sett-coder wraps a headless coding CLI (Claude Code by default)
// as a Sett tool: it runs the CLI on the workflow's branch in a Git
// worktree and answers a CodeCommit. See agents/README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/settdev/sett/agents/coder/internal/coder"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := coder.Main(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

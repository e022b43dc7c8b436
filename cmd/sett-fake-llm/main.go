// Command sett-fake-llm is a deterministic fake chat model provider
// (OpenAI Chat Completions and Anthropic Messages) for tests and demos; see
// internal/fakellm.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/settdev/sett/internal/fakellm"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := fakellm.Main(ctx, os.Args[1:], os.Getenv, os.Stderr)
	stop()
	os.Exit(code)
}

// Command sett-agent-llm is Sett's model-backed agent tool: one binary
// whose role (planner, reviewer, writer, learner, summariser or a template
// of your own) is a prompt template, calling any OpenAI-compatible Chat
// Completions endpoint or the Anthropic Messages API. See agents/README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/settdev/sett/agents/llm/internal/agent"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := agent.Main(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

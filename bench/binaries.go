package bench

import (
	"context"
	"fmt"

	"github.com/settdev/sett/internal/daemonproc"
)

// Binaries are the programs a run starts: the daemons as the repository
// builds them, the no-op tool and the LLM agent (agents/llm).
type Binaries struct {
	Orchestrator string
	Cub          string
	Noop         string
	LLMAgent     string
	// Sett is the CLI (the console step runs `sett ui`); Browsers plays
	// the console's browsers.
	Sett     string
	Browsers string
}

// buildBinaries compiles the daemons, the no-op tool, the LLM agent, the
// CLI and the browsers into dir with one `go build` (daemonproc.Build).
func buildBinaries(ctx context.Context, root, dir string) (Binaries, error) {
	paths, err := daemonproc.Build(ctx, root, dir,
		daemonproc.Target{Pkg: "./cmd/orchestrator", Name: "sett-orchestrator"}, daemonproc.Target{Pkg: "./cmd/cub", Name: "sett-cub"},
		daemonproc.Target{Pkg: "./bench/cmd/sett-bench-noop"}, daemonproc.Target{Pkg: "./agents/llm", Name: "sett-agent-llm"},
		daemonproc.Target{Pkg: "./cmd/sett"}, daemonproc.Target{Pkg: "./bench/cmd/sett-bench-browsers"})
	if err != nil {
		return Binaries{}, fmt.Errorf("bench: %w", err)
	}
	return Binaries{Orchestrator: paths[0], Cub: paths[1], Noop: paths[2], LLMAgent: paths[3], Sett: paths[4], Browsers: paths[5]}, nil
}

// findRepoRoot is daemonproc.RepoRoot, naming the flag that overrides it.
func findRepoRoot() (string, error) {
	root, err := daemonproc.RepoRoot()
	if err != nil {
		return "", fmt.Errorf("bench: %w; pass -repo", err)
	}
	return root, nil
}

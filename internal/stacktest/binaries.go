package stacktest

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/settdev/sett/internal/daemonproc"
)

// Binaries are the built programs of the repository. Sett is only built by
// BuildCLI.
type Binaries struct {
	Dir          string
	Sett         string
	Orchestrator string
	Cub          string
	Writer       string
	Reviewer     string
	// Read is sett-read, the tools' fetch channel client.
	Read string
}

var (
	buildOnce sync.Once
	built     Binaries
	buildErr  error
)

// Build compiles the binaries once per test process into a temporary
// directory (removed by Cleanup at the end of TestMain).
func Build(tb testing.TB) Binaries {
	tb.Helper()
	buildOnce.Do(func() { built, buildErr = build() })
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return built
}

// Cleanup removes the built binaries; call it from TestMain after m.Run.
func Cleanup() {
	if built.Dir != "" {
		_ = os.RemoveAll(built.Dir)
	}
}

func build() (Binaries, error) {
	root, err := daemonproc.RepoRoot()
	if err != nil {
		return Binaries{}, err
	}
	dir, err := os.MkdirTemp("", "sett-bin-*")
	if err != nil {
		return Binaries{}, err
	}
	paths, err := daemonproc.Build(context.Background(), root, dir,
		daemonproc.Target{Pkg: "./cmd/orchestrator", Name: "sett-orchestrator"}, daemonproc.Target{Pkg: "./cmd/cub", Name: "sett-cub"},
		daemonproc.Target{Pkg: "./agents/writer", Name: "sett-writer"}, daemonproc.Target{Pkg: "./agents/reviewer", Name: "sett-reviewer"},
		daemonproc.Target{Pkg: "./cmd/sett-read"})
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{Dir: dir, Sett: filepath.Join(dir, "sett"), Orchestrator: paths[0], Cub: paths[1],
		Writer: paths[2], Reviewer: paths[3], Read: paths[4]}, nil
}

var (
	cliOnce sync.Once
	cliErr  error
)

// BuildCLI builds the sett command as well (into Binaries.Sett) for the
// tests that run it; the daemons' tests do not need it.
func BuildCLI(tb testing.TB) Binaries {
	tb.Helper()
	b := Build(tb)
	cliOnce.Do(func() {
		root, err := daemonproc.RepoRoot()
		if err != nil {
			cliErr = err
			return
		}
		_, cliErr = daemonproc.Build(context.Background(), root, b.Dir, daemonproc.Target{Pkg: "./cmd/sett"})
	})
	if cliErr != nil {
		tb.Fatal(cliErr)
	}
	return b
}

package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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

// buildBinaries compiles the daemons, the no-op tool and the LLM agent into dir with one
// `go build` (CGO_ENABLED=0, static, as the images package them). Symbols
// are kept so that perf can profile the daemons.
func buildBinaries(ctx context.Context, root, dir string) (Binaries, error) {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", dir+string(filepath.Separator),
		"./cmd/orchestrator", "./cmd/cub", "./bench/cmd/sett-bench-noop", "./agents/llm", "./cmd/sett", "./bench/cmd/sett-bench-browsers")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return Binaries{}, fmt.Errorf("bench: go build: %v\n%s", err, out)
	}
	b := Binaries{
		Orchestrator: filepath.Join(dir, "sett-orchestrator"),
		Cub:          filepath.Join(dir, "sett-cub"),
		Noop:         filepath.Join(dir, "sett-bench-noop"),
		LLMAgent:     filepath.Join(dir, "sett-agent-llm"),
		Sett:         filepath.Join(dir, "sett"),
		Browsers:     filepath.Join(dir, "sett-bench-browsers"),
	}
	// go build names each binary after its package directory.
	for from, to := range map[string]string{"orchestrator": b.Orchestrator, "cub": b.Cub, "llm": b.LLMAgent} {
		if err := os.Rename(filepath.Join(dir, from), to); err != nil {
			return Binaries{}, fmt.Errorf("bench: %w", err)
		}
	}
	return b, nil
}

// findRepoRoot walks up from the working directory, then from this source
// file, to the directory whose go.mod declares the Sett module.
func findRepoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			if isSettModule(filepath.Join(dir, "go.mod")) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("bench: cannot find the repository root (a go.mod of github.com/settdev/sett above the working directory); pass -repo")
}

func isSettModule(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "module ")) == "github.com/settdev/sett"
		}
	}
	return false
}

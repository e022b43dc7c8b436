package stacktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
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
	root, err := repoRoot()
	if err != nil {
		return Binaries{}, err
	}
	dir, err := os.MkdirTemp("", "sett-bin-*")
	if err != nil {
		return Binaries{}, err
	}
	b := Binaries{
		Dir:          dir,
		Sett:         filepath.Join(dir, "sett"),
		Orchestrator: filepath.Join(dir, "sett-orchestrator"),
		Cub:          filepath.Join(dir, "sett-cub"),
		Writer:       filepath.Join(dir, "sett-writer"),
		Reviewer:     filepath.Join(dir, "sett-reviewer"),
		Read:         filepath.Join(dir, "sett-read"),
	}
	targets := map[string]string{
		b.Orchestrator: "./cmd/orchestrator", b.Cub: "./cmd/cub",
		b.Writer: "./agents/writer", b.Reviewer: "./agents/reviewer", b.Read: "./cmd/sett-read",
	}
	for out, pkg := range targets {
		if err := goBuild(root, out, pkg); err != nil {
			return Binaries{}, err
		}
	}
	return b, nil
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
		root, err := repoRoot()
		if err != nil {
			cliErr = err
			return
		}
		cliErr = goBuild(root, b.Sett, "./cmd/sett")
	})
	if cliErr != nil {
		tb.Fatal(cliErr)
	}
	return b
}

func goBuild(root, out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("stacktest: go build %s: %v\n%s", pkg, err, msg)
	}
	return nil
}

// repoRoot finds the module root from this source file's location.
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("stacktest: cannot locate the repository")
	}
	dir := filepath.Dir(file)
	for !strings.HasSuffix(dir, string(filepath.Separator)) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", fmt.Errorf("stacktest: go.mod not found above %s", file)
}

package daemonproc

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

// module is the path the repository's go.mod declares; RepoRoot looks for
// it, so that a nested module (bench/asynq) is not taken for the root.
const module = "github.com/settdev/sett"

// Target is one program to build: a main package of the repository and
// the name of its binary.
type Target struct {
	// Pkg is the package, relative to the repository root ("./cmd/cub").
	Pkg string
	// Name is the binary's file name; "" keeps the name go build gives it
	// (the package directory's).
	Name string
}

// Build compiles targets into dir with one `go build` run in root
// (CGO_ENABLED=0, static, as the images package them; symbols are kept so
// that perf can profile the daemons), and returns each binary's path in
// the order of targets. Two targets whose packages end in the same
// directory name are an error: go build would write them to one file.
func Build(ctx context.Context, root, dir string, targets ...Target) ([]string, error) {
	if len(targets) == 0 {
		return nil, nil
	}
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	seen := map[string]bool{}
	for _, t := range targets {
		base := filepath.Base(t.Pkg)
		if seen[base] {
			return nil, fmt.Errorf("daemonproc: two targets build %q", base)
		}
		seen[base] = true
		args = append(args, t.Pkg)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("daemonproc: go build: %w\n%s", err, out)
	}
	paths := make([]string, len(targets))
	for i, t := range targets {
		built := filepath.Join(dir, filepath.Base(t.Pkg))
		paths[i] = built
		if t.Name == "" || t.Name == filepath.Base(t.Pkg) {
			continue
		}
		paths[i] = filepath.Join(dir, t.Name)
		if err := os.Rename(built, paths[i]); err != nil {
			return nil, fmt.Errorf("daemonproc: %w", err)
		}
	}
	return paths, nil
}

// RepoRoot returns the repository's root: the first directory, walking up
// from the working directory and then from this source file, whose go.mod
// declares the Sett module.
func RepoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			if declaresModule(filepath.Join(dir, "go.mod")) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("daemonproc: cannot find the repository root (a go.mod of " + module + " above the working directory)")
}

// declaresModule reports whether the go.mod at path declares the Sett
// module.
func declaresModule(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(rest) == module
		}
	}
	return false
}

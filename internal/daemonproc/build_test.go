package daemonproc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDeclaresModule(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, gomod string
		want        bool
	}{
		{"the module", "module github.com/settdev/sett\n\ngo 1.23\n", true},
		{"after a comment", "// Sett\nmodule   github.com/settdev/sett  \n", true},
		{"a nested module", "module github.com/settdev/sett/bench/asynq\n", false},
		{"another module", "module example.com/other\n", false},
		{"no module line", "go 1.23\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".mod")
			if err := os.WriteFile(path, []byte(tc.gomod), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := declaresModule(path); got != tc.want {
				t.Errorf("declaresModule(%q) = %v, want %v", tc.gomod, got, tc.want)
			}
		})
	}
	if declaresModule(filepath.Join(dir, "missing.mod")) {
		t.Error("a missing go.mod declares the module")
	}
}

func TestRepoRootHoldsThisPackage(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "daemonproc", "doc.go")); err != nil {
		t.Errorf("RepoRoot = %s, which does not hold internal/daemonproc: %v", root, err)
	}
}

// TestBuildRefusesTwoBinariesOfOneName: go build -o dir/ would write both
// to one file, so Build says so before it runs anything.
func TestBuildRefusesTwoBinariesOfOneName(t *testing.T) {
	_, err := Build(context.Background(), t.TempDir(), t.TempDir(), Target{Pkg: "./a/cub"}, Target{Pkg: "./b/cub", Name: "other"})
	if err == nil || !strings.Contains(err.Error(), `two targets build "cub"`) {
		t.Fatalf("Build = %v, want the clash named", err)
	}
}

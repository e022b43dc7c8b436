package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The quick start in a fresh Git repository: the files `sett init` wrote
// do not make forage refuse, other files still do, and a .gitignore with
// more than init's line is the user's.
func TestForageIgnoresInitsOwnUntrackedFiles(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test: install it (Debian: apt-get install git)")
	}
	e := newTestEnv(t)
	if out, err := exec.Command("git", "-C", e.app.Dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	e.mustRun(t, "init")
	e.mustRun(t, "forage", "--goal", "right after init")

	// A file of the user's in init's directory is a change.
	if err := os.WriteFile(filepath.Join(e.app.Dir, "agents", "mine.sh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.run(t, "forage", "--goal", "with a file of mine"); err == nil || !strings.Contains(err.Error(), "agents/mine.sh") {
		t.Fatalf("forage with agents/mine.sh untracked: %v, want a refusal naming it", err)
	}
	if err := os.Remove(filepath.Join(e.app.Dir, "agents", "mine.sh")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(e.app.Dir, ".gitignore"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("node_modules/\n")
	f.Close()
	if _, _, err := e.run(t, "forage", "--goal", "with my own gitignore"); err == nil || !strings.Contains(err.Error(), ".gitignore") {
		t.Fatalf("forage with a .gitignore of the user's: %v, want a refusal naming it", err)
	}
}

// `sett init --vault vault` in a Git workspace: the vault is git-ignored,
// so Sett's rewrites of Dashboard.md and its moves of task files never
// make the tree dirty, and forage keeps working.
func TestForageWorksWithAVaultInTheWorkspace(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test: install it (Debian: apt-get install git)")
	}
	e := newTestEnv(t)
	if out, err := exec.Command("git", "-C", e.app.Dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	out := e.mustRun(t, "init", "--vault", "vault")
	if !strings.Contains(out, "Added /vault/ to .gitignore") {
		t.Errorf("init output does not say the vault is ignored:\n%s", out)
	}
	// What the orchestrator does to the vault while it runs.
	if err := os.WriteFile(filepath.Join(e.app.Dir, "vault", "Dashboard.md"), []byte("# rewritten\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.app.Dir, "vault", "Needs_Action", "task.md"), []byte("Do it.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustRun(t, "forage", "--goal", "with a busy vault")
	st, err := exec.Command("git", "-C", e.app.Dir, "status", "--porcelain").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(st), "vault") {
		t.Errorf("git status shows the vault:\n%s", st)
	}
	// A second init adds no second entry.
	e.mustRun(t, "init", "--vault", "vault", "--force")
	b, _ := os.ReadFile(filepath.Join(e.app.Dir, ".gitignore"))
	if strings.Count(string(b), "/vault/") != 1 {
		t.Errorf(".gitignore = %q, want one /vault/ entry", b)
	}
}

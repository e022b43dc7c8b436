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

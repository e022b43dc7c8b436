package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/settdev/sett/internal/scaffold"
)

// gitChanges lists the uncommitted changes of the Git work tree holding
// dir, as `git status --porcelain` prints them ("M main.go", "?? new.txt"),
// leaving out Sett's own state directory .sett/ and the files `sett init`
// writes while they are untracked (initFile): they configure Sett, they
// are not work an agent would miss, and the quick start — `sett init`,
// `sett up`, `sett forage` — must work in a fresh repository without a
// commit in between. Once tracked, a change to them counts like any
// other. checked is false when there is nothing to check: git is not
// installed, or dir is not inside a Git work tree.
func gitChanges(ctx context.Context, dir string) (changes []string, checked bool) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, false
	}
	// Untracked files one by one (not "?? agents/"), so that init's files
	// can be told from others in the same directory.
	out, err := exec.CommandContext(ctx, git, "-C", dir, "status", "--porcelain=v1", "--untracked-files=all").Output()
	if err != nil {
		// Not a repository (exit 128), or git cannot read it: the
		// check only applies to a Git workspace.
		return nil, false
	}
	// Porcelain paths are relative to the top of the work tree.
	prefix := ""
	if b, err := exec.CommandContext(ctx, git, "-C", dir, "rev-parse", "--show-prefix").Output(); err == nil {
		prefix = strings.TrimSpace(string(b))
	}
	for _, line := range strings.Split(string(out), "\n") {
		if len(line) < 4 {
			continue
		}
		p := strings.Trim(line[3:], `"`)
		if p == ".sett/" || strings.HasPrefix(p, ".sett/") || strings.Contains(p, "/.sett/") {
			continue
		}
		if rel, ok := strings.CutPrefix(p, prefix); ok && line[:2] == "??" && initFile(dir, rel) {
			continue
		}
		changes = append(changes, strings.TrimSpace(line[:2])+" "+line[3:])
	}
	return changes, true
}

// dirtyWorkspaceError explains why forage refuses and what to do.
func dirtyWorkspaceError(dir string, changes []string) error {
	shown := changes
	if len(shown) > 5 {
		shown = shown[:5]
	}
	more := ""
	if len(changes) > len(shown) {
		more = fmt.Sprintf("\n  ... and %d more", len(changes)-len(shown))
	}
	return fmt.Errorf("the workspace %s has %d uncommitted change(s):\n  %s%s\nagents work on the committed tree: commit or stash the changes, or pass --allow-dirty to post the goal anyway",
		dir, len(changes), strings.Join(shown, "\n  "), more)
}

// initFile reports whether rel (relative to the workspace dir, forward
// slashes) is a file `sett init` writes: one of the scaffold's files, or a
// .gitignore that holds nothing but the .sett/ entry init adds.
func initFile(dir, rel string) bool {
	for _, f := range scaffold.Files() {
		if f.Path == rel {
			return true
		}
	}
	if rel != ".gitignore" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return false
	}
	lines := strings.Split(string(b), "\n")
	for i, line := range lines {
		l := strings.TrimSpace(line)
		if l == "" || l == scaffold.GitignoreEntry || l == scaffold.VaultIgnoreComment {
			continue
		}
		if i > 0 && strings.TrimSpace(lines[i-1]) == scaffold.VaultIgnoreComment {
			continue // the vault entry `sett init --vault` wrote
		}
		return false
	}
	return true
}

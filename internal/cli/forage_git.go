package cli

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// gitChanges lists the uncommitted changes of the Git work tree holding
// dir, as `git status --porcelain` prints them ("M main.go", "?? new.txt"),
// leaving out Sett's own state directory .sett/. checked is false when
// there is nothing to check: git is not installed, or dir is not inside a
// Git work tree.
func gitChanges(ctx context.Context, dir string) (changes []string, checked bool) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, false
	}
	out, err := exec.CommandContext(ctx, git, "-C", dir, "status", "--porcelain=v1").Output()
	if err != nil {
		// Not a repository (exit 128), or git cannot read it: SPEC §7
		// only asks for the check in a Git workspace.
		return nil, false
	}
	for _, line := range strings.Split(string(out), "\n") {
		if len(line) < 4 {
			continue
		}
		p := strings.Trim(line[3:], `"`)
		if p == ".sett/" || strings.HasPrefix(p, ".sett/") || strings.Contains(p, "/.sett/") {
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

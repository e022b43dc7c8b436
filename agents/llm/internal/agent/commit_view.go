package agent

import (
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/settdev/sett/agents/internal/prompt"
)

// commitHash is what a CodeCommit payload holds (the cub checks the same).
var commitHash = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// maxShow bounds the `git show` output read for a prompt.
const maxShow = 256 << 10

// commitView shows a CodeCommit target to a reviewer: `git show --stat
// --patch` in the workspace when git can, else why not (the template
// says so, and falls back to the author's summary).
func commitView(ctx context.Context, workspace, payload string) *prompt.Commit {
	hash := strings.TrimSpace(payload)
	c := &prompt.Commit{Hash: hash}
	if !commitHash.MatchString(hash) {
		c.Why = "the payload is not a commit hash"
		return c
	}
	git, err := exec.LookPath("git")
	if err != nil {
		c.Why = "git is not installed where this agent runs"
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	args := []string{"-c", "safe.directory=*", "show", "--stat", "--patch", "--format=fuller", "--no-color", hash}
	if workspace != "" {
		args = append([]string{"-C", workspace}, args...)
	}
	cmd := exec.CommandContext(ctx, git, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &limited{w: &out, n: maxShow}, &limited{w: &errOut, n: 4096}
	if err := cmd.Run(); err != nil {
		c.Why = "git show failed: " + strings.TrimSpace(errOut.String())
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			c.Why = "git show failed: " + err.Error()
		}
		return c
	}
	c.Available, c.Show = true, out.String()
	return c
}

// limited keeps the first n bytes written to it and drops the rest.
type limited struct {
	w interface{ WriteString(string) (int, error) }
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.WriteString(string(p[:k]))
		l.n -= k
	}
	return len(p), nil
}

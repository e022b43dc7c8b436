package coder

import (
	"context"
	"errors"
	"os"
)

// Worktree is the workflow's branch checked out for one run.
type Worktree struct {
	// Dir is the worktree's directory; Branch its branch; Base the
	// commit it started from.
	Dir, Branch, Base string
	repo              *Repo
}

// Remove deletes the worktree (the branch and its commits stay).
func (w *Worktree) Remove(ctx context.Context) error {
	if _, err := git(ctx, w.repo.env, w.repo.Top, "", "worktree", "remove", "--force", w.Dir); err != nil {
		if rmErr := os.RemoveAll(w.Dir); rmErr != nil {
			return errors.Join(err, rmErr)
		}
		_, _ = git(ctx, w.repo.env, w.repo.Top, "", "worktree", "prune")
	}
	return nil
}

// Identity signs a commit when Git has none configured.
type Identity struct{ Name, Email string }

// Commit turns everything the CLI changed since Base — commits it made
// itself and changes it left in the tree, untracked files included, ignored
// files not — into one commit with message, and returns its hash and `git
// diff --shortstat`. changed is false (and nothing is committed) when the
// tree equals Base. Hooks are not run (--no-verify): the reviewers are the
// check, and a hook's tools may not exist where the agent runs.
func (w *Worktree) Commit(ctx context.Context, message string, id Identity) (hash, stat string, changed bool, err error) {
	head, err := git(ctx, w.repo.env, w.Dir, "", "rev-parse", "HEAD")
	if err != nil {
		return "", "", false, err
	}
	if head != w.Base {
		// The CLI committed by itself: keep its changes, not its commits,
		// so that one run is one commit.
		if _, err := git(ctx, w.repo.env, w.Dir, "", "reset", "--soft", w.Base); err != nil {
			return "", "", false, err
		}
	}
	if _, err := git(ctx, w.repo.env, w.Dir, "", "add", "--all"); err != nil {
		return "", "", false, err
	}
	if _, err := git(ctx, w.repo.env, w.Dir, "", "diff", "--cached", "--quiet"); err == nil {
		return "", "", false, nil
	} else if exitCode(err) != 1 {
		return "", "", false, err
	}
	args := []string{"commit", "--quiet", "--no-verify", "--file=-"}
	if email, _ := git(ctx, w.repo.env, w.Dir, "", "config", "user.email"); email == "" && envValue(w.repo.env, "GIT_AUTHOR_EMAIL") == "" && envValue(w.repo.env, "EMAIL") == "" {
		args = append([]string{"-c", "user.name=" + id.Name, "-c", "user.email=" + id.Email}, args...)
	}
	if _, err := git(ctx, w.repo.env, w.Dir, message, args...); err != nil {
		return "", "", false, err
	}
	if hash, err = git(ctx, w.repo.env, w.Dir, "", "rev-parse", "HEAD"); err != nil {
		return "", "", false, err
	}
	stat, _ = git(ctx, w.repo.env, w.Dir, "", "diff", "--shortstat", w.Base, hash)
	return hash, stat, true, nil
}

package coder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	toolio "github.com/settdev/sett/pkg/tool"
)

// gitTimeout bounds one git command (a checkout of a large tree included).
const gitTimeout = 5 * time.Minute

// Repo is the workspace's Git repository. Its methods run the git
// command; they are safe for concurrent use.
type Repo struct {
	// Top is the top of the workspace's working tree, CommonDir the
	// repository's .git directory (shared by its worktrees).
	Top, CommonDir string
	// env is the environment git runs with (nil: this process's).
	env []string
}

// git runs git in dir with env (nil: this process's) and stdin, and returns its trimmed stdout, or an
// error that quotes its stderr. safe.directory=* because the operator
// pointed this agent at this repository: a workspace owned by another user
// (a container running as a different uid) is still the one to work on.
func git(ctx context.Context, env []string, dir, stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errOut.String())
		if msg == "" {
			msg = err.Error()
		}
		return strings.TrimSpace(out.String()), &gitError{args: args, msg: msg, err: err}
	}
	return strings.TrimSpace(out.String()), nil
}

// gitError is a failed git command.
type gitError struct {
	args []string
	msg  string
	err  error
}

func (e *gitError) Error() string { return fmt.Sprintf("git %s: %s", strings.Join(e.args, " "), e.msg) }
func (e *gitError) Unwrap() error { return e.err }

// exitCode returns the exit code of a failed git command, -1 if it did
// not run.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// OpenRepo finds the repository of the workspace dir; git runs with env
// (nil: this process's). Not a repository (or no git) is a permanent
// failure: the wrapper commits its work.
func OpenRepo(ctx context.Context, dir string, env []string) (*Repo, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, toolio.Permanent("git is not installed where the coder runs: install it in the agent's image")
	}
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, toolio.Permanent("cannot find the workspace: %v", err)
		}
	}
	top, err := git(ctx, env, dir, "", "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, toolio.Permanent("the workspace %s is not a Git repository (%v): the coder commits its changes on a branch, so run it in a repository (git init, one commit)", dir, err)
	}
	common, err := git(ctx, env, dir, "", "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return nil, toolio.Permanent("cannot find the .git directory of %s: %v", top, err)
	}
	return &Repo{Top: top, CommonDir: common, env: env}, nil
}

// worktreesDir holds the wrapper's worktrees and their locks, inside .git
// so that they never show in the user's checkout.
func (r *Repo) worktreesDir() string { return filepath.Join(r.CommonDir, "sett-worktrees") }

// ClaimCommit returns the commit on branch whose Sett-Claim trailer names
// claimID, if there is one: the result of an earlier run of this claim.
// An empty claimID has none.
func (r *Repo) ClaimCommit(ctx context.Context, branch, claimID string) (string, bool, error) {
	if claimID == "" {
		return "", false, nil
	}
	if _, err := git(ctx, r.env, r.Top, "", "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err != nil {
		if exitCode(err) == 1 {
			return "", false, nil // no such branch yet
		}
		return "", false, err
	}
	out, err := git(ctx, r.env, r.Top, "", "log", "refs/heads/"+branch, "--format=%H", "--fixed-strings",
		"--grep="+trailerClaim+": "+claimID, "-n", "1")
	if err != nil {
		return "", false, err
	}
	return out, out != "", nil
}

// AddWorktree checks branch out in a fresh worktree named name, creating
// the branch from the workspace's HEAD when it does not exist. A worktree
// left by a crashed run is removed first (the caller holds the lock).
func (r *Repo) AddWorktree(ctx context.Context, name, branch string) (*Worktree, error) {
	dir := filepath.Join(r.worktreesDir(), name)
	if _, err := os.Stat(dir); err == nil {
		_, _ = git(ctx, r.env, r.Top, "", "worktree", "remove", "--force", dir)
		if err := os.RemoveAll(dir); err != nil {
			return nil, toolio.Transient("cannot remove the leftover worktree %s: %v", dir, err)
		}
	}
	if _, err := git(ctx, r.env, r.Top, "", "worktree", "prune"); err != nil {
		return nil, toolio.Transient("%v", err)
	}
	exists := true
	if _, err := git(ctx, r.env, r.Top, "", "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err != nil {
		exists = false
	}
	var err error
	if exists {
		_, err = git(ctx, r.env, r.Top, "", "worktree", "add", "--quiet", dir, branch)
	} else {
		if _, herr := git(ctx, r.env, r.Top, "", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); herr != nil {
			return nil, toolio.Permanent("the workspace repository %s has no commit yet: the coder branches off HEAD, so commit something first", r.Top)
		}
		_, err = git(ctx, r.env, r.Top, "", "worktree", "add", "--quiet", "-b", branch, dir, "HEAD")
	}
	if err != nil {
		if strings.Contains(err.Error(), "already") && strings.Contains(err.Error(), "checked out") || strings.Contains(err.Error(), "is already used by worktree") {
			return nil, toolio.Permanent("branch %s is checked out elsewhere (%v): the coder needs it free; check out another branch there", branch, err)
		}
		return nil, toolio.Transient("cannot check out branch %s: %v", branch, err)
	}
	base, err := git(ctx, r.env, dir, "", "rev-parse", "HEAD")
	if err != nil {
		return nil, toolio.Transient("%v", err)
	}
	return &Worktree{Dir: dir, Branch: branch, Base: base, repo: r}, nil
}

// envValue returns the value of name in env (nil: this process's).
func envValue(env []string, name string) string {
	if env == nil {
		return os.Getenv(name)
	}
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

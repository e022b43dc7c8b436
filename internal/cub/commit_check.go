package cub

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/settdev/sett/internal/textcut"
	"github.com/settdev/sett/internal/tool"
)

// CommitType is the artefact type whose payload must name a commit of the
// workspace repository.
const CommitType = "CodeCommit"

var commitPattern = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// CheckCommit verifies that payload names a commit that exists in the Git
// repository at dir. It returns nil when dir is not a Git repository (there
// is nothing to check against) and a precise error otherwise.
func CheckCommit(ctx context.Context, dir, payload string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tool.RunTracked(exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "--git-dir")); err != nil {
		return nil // not a repository (or no git): nothing to validate against
	}
	hash := strings.TrimSpace(payload)
	if !commitPattern.MatchString(hash) {
		return fmt.Errorf("a %s artefact must carry a commit hash (7-64 lowercase hex digits), got %q", CommitType, textcut.Bytes(hash, 80))
	}
	if err := tool.RunTracked(exec.CommandContext(ctx, "git", "-C", dir, "cat-file", "-e", hash+"^{commit}")); err != nil {
		return fmt.Errorf("a %s artefact names commit %s, which does not exist in the workspace repository", CommitType, hash)
	}
	return nil
}

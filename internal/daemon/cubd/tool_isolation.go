package cubd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/cub"
	"github.com/settdev/sett/internal/tool"
)

// Environment of the cub that the local runtime sets (a container needs
// neither: the container is the sandbox, and its tools die with the cub,
// its PID 1).
const (
	// EnvRunDir is the directory of the cub's tool ledger, which survives
	// the cub.
	EnvRunDir = "SETT_RUN_DIR"
	// EnvToolHide lists (colon-separated) directories tools must not see:
	// the state home, with the Redis password.
	EnvToolHide = "SETT_TOOL_HIDE"
)

// leftoverWait bounds how long a starting cub waits for the tools of its
// predecessor to die.
const leftoverWait = 30 * time.Second

// isolateTools prepares how the cub runs tools: it kills what a killed
// predecessor left running (from the ledger in SETT_RUN_DIR) before
// anything runs, so that a claim never runs twice at once, and sets up the
// sandbox when SETT_TOOL_HIDE asks for one and the host allows it (Linux
// namespaces: root, or unprivileged user namespaces). Without a sandbox it says what
// is not enforced.
func isolateTools(ctx context.Context, set *cub.Settings, log zerolog.Logger) error {
	if dir := os.Getenv(EnvRunDir); dir != "" {
		set.ToolLedger = &tool.Ledger{Dir: dir}
		kctx, cancel := context.WithTimeout(ctx, leftoverWait)
		n, err := set.ToolLedger.KillLeftovers(kctx)
		cancel()
		if err != nil {
			return fmt.Errorf("cub: tools of the previous cub still run, so this one will not start a second copy: %w", err)
		}
		if n > 0 {
			log.Warn().Int("tools", n).Msg("killed tools that a previous cub of this agent left running")
		}
	}
	hide := os.Getenv(EnvToolHide)
	if hide == "" {
		return nil
	}
	dirs := filepath.SplitList(hide)
	exe, err := os.Executable()
	if err == nil {
		err = tool.ProbeSandbox(ctx, exe, dirs)
	}
	if err != nil {
		ro := ""
		if set.WorkspaceReadOnly {
			ro = "; workspace.mode ro is NOT enforced (the tool can write the workspace)"
		}
		log.Warn().Err(err).Msg("tools run without a sandbox (it needs Linux namespaces: root, or unprivileged user namespaces): they can read " +
			strings.Join(dirs, ", ") + " as this user" + ro)
		return nil
	}
	set.Sandbox = &tool.Sandbox{HelperPath: exe, Hide: dirs}
	if set.WorkspaceReadOnly {
		set.Sandbox.ReadOnly = []string{set.Workspace}
	}
	log.Info().Strs("hidden", dirs).Bool("workspace_read_only", set.WorkspaceReadOnly).Msg("tools run in a sandbox")
	return nil
}

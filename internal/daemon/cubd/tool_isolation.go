package cubd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	// the state home, with the Redis password, and the vault. Set, it
	// also asks for a sandbox: the cub refuses to start without one.
	EnvToolHide = "SETT_TOOL_HIDE"
	// EnvToolUID is the uid a root-started cub runs its tools as
	// (tool_uid); empty means tool.DefaultToolUID.
	EnvToolUID = "SETT_TOOL_UID"
)

// leftoverWait bounds how long a starting cub waits for the tools of its
// predecessor to die.
const leftoverWait = 30 * time.Second

// isolateTools prepares how the cub runs tools: it kills what a killed
// predecessor left running (from the ledger in SETT_RUN_DIR) before
// anything runs, so that a claim never runs twice at once, and sets up the
// sandbox when SETT_TOOL_HIDE asks for one (Linux namespaces: root, or
// unprivileged user namespaces). A sandbox asked for and not possible is
// an error: tools never run unisolated unless the configuration says
// isolation: none (and the runtime then sets no SETT_TOOL_HIDE).
func isolateTools(ctx context.Context, set *cub.Config, log zerolog.Logger) error {
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
	if err != nil {
		return fmt.Errorf("cub: find the sandbox helper: %w", err)
	}
	uid := 0
	if v := os.Getenv(EnvToolUID); v != "" {
		if uid, err = strconv.Atoi(v); err != nil || uid <= 0 {
			return fmt.Errorf("cub: %s=%q is not a uid above 0", EnvToolUID, v)
		}
	}
	sb := &tool.Sandbox{HelperPath: exe, Hide: dirs, ToolUID: uid}
	if set.WorkspaceReadOnly {
		sb.ReadOnly = []string{set.Workspace}
	}
	if err := sb.Probe(ctx, set.Workspace); err != nil {
		return fmt.Errorf("cub: cannot isolate tools (set isolation: none in sett.yml to run them unisolated, as %s): %w",
			"this user, able to read "+strings.Join(dirs, ", "), err)
	}
	set.Sandbox = sb
	log.Info().Strs("hidden", dirs).Bool("workspace_read_only", set.WorkspaceReadOnly).Bool("as_root", os.Geteuid() == 0).
		Msg("tools run in a sandbox")
	return nil
}

package docker

import (
	"fmt"
	"strings"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/runtime"
)

// checkWorkspaceAccess refuses, before anything is created, a workspace or
// configuration file that the containers' user cannot use: otherwise
// every goal fails later with a bare "permission denied" from inside the
// container (a 0700 workspace from mktemp -d, owned by root, and agents
// running as 65532). Errors wrap ErrInvalidSpec and say how to fix it.
func checkWorkspaceAccess(spec runtime.UpSpec, user string) error {
	if spec.Config == nil || spec.Workspace == "" {
		return nil
	}
	var problems []string
	write := false
	for _, name := range spec.Config.AgentNames() {
		if spec.Config.Agents[name].Workspace.Mode == config.WorkspaceReadWrite {
			write = true
		}
	}
	if msg := checkAccess(user, spec.Workspace, write); msg != "" {
		problems = append(problems, "the workspace: "+msg)
	}
	if spec.ConfigPath != "" {
		if msg := checkAccess(user, spec.ConfigPath, false); msg != "" {
			problems = append(problems, "the configuration: "+msg)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%w: the agent containers run as %s, and %s: run `sett up` as the owner of the workspace, make it accessible (chmod o+rx, or a+rwx for rw agents), or set services.containers.user to a user that can",
		ErrInvalidSpec, user, strings.Join(problems, "; "))
}

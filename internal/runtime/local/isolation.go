package local

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/tool"
)

// toolHiddenDirs are the directories a tool's sandbox covers: the state
// home (instance records, Redis passwords, plans) and the workspace's
// legacy .sett.
func toolHiddenDirs(workspace string) []string {
	return []string{instance.StateHome(), instance.SettDir(workspace)}
}

// warnIsolation tells the user, once per Up, what the local runtime cannot
// enforce on this host: without a sandbox (Linux namespaces: root, or
// unprivileged user namespaces) tools run as the user and can read the state home,
// including the Redis password, and a workspace of mode ro stays writable;
// resource limits are never applied.
func warnIsolation(ctx context.Context, spec runtime.UpSpec, cub string) {
	if spec.WarnFunc == nil {
		return
	}
	cfg := spec.Config
	var ro, limited []string
	for _, name := range cfg.AgentNames() {
		a := cfg.Agents[name]
		if a.Workspace.Mode != config.WorkspaceReadWrite {
			ro = append(ro, name)
		}
		if a.Resources.CPUs > 0 || a.Resources.Memory.Int64() > 0 {
			limited = append(limited, name)
		}
	}
	if err := tool.ProbeSandbox(ctx, cub, toolHiddenDirs(spec.Workspace)); err != nil {
		msg := fmt.Sprintf("the local runtime cannot isolate tools here (no Linux namespaces for this user: %v): tools run as uid %d and can read what that user can, including %s, which holds the instance's Redis password",
			firstLine(err), os.Getuid(), instance.StateHome())
		if len(ro) > 0 {
			msg += fmt.Sprintf("; workspace.mode ro is not enforced for %s", strings.Join(ro, ", "))
		}
		spec.WarnFunc(msg + ". Use the Docker runtime, or enable unprivileged user namespaces, for isolation (see docs/operations.md, \"What a tool can reach\")")
	}
	if len(limited) > 0 {
		spec.WarnFunc(fmt.Sprintf("the local runtime does not apply resources (cpus, memory) or a pids limit: not enforced for %s", strings.Join(limited, ", ")))
	}
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	return s
}

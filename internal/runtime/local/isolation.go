package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/tool"
)

// toolHiddenDirs are the directories a tool's sandbox covers: the state
// home (instance records, Redis passwords, plans), the workspace's legacy
// .sett and the vault, wherever it is (inside the workspace too): people
// approve plans and start goals by moving files there, so a tool that
// could write it could approve its own work.
func toolHiddenDirs(spec runtime.UpSpec) []string {
	dirs := []string{instance.StateHome(), instance.SettDir(spec.Workspace)}
	if v := spec.Config.Vault.ResolvedPath(filepath.Dir(spec.ConfigPath)); v != "" {
		dirs = append(dirs, v)
	}
	return dirs
}

// isolationEnv is what a cub needs to sandbox its tools (see
// cubd.isolateTools); nothing under isolation: none.
func isolationEnv(spec runtime.UpSpec) map[string]string {
	if spec.Config.Isolation == config.IsolationNone {
		return map[string]string{}
	}
	return map[string]string{
		"SETT_TOOL_HIDE": strings.Join(toolHiddenDirs(spec), string(os.PathListSeparator)),
		"SETT_TOOL_UID":  strconv.Itoa(spec.Config.ToolUID),
	}
}

// isolationSummary is the one line that `sett status` shows about it.
func isolationSummary(cfg *config.Config) string {
	switch {
	case cfg.Isolation == config.IsolationNone:
		return "none: tools run as uid " + strconv.Itoa(os.Getuid()) + " and can read the instance's Redis password (isolation: none)"
	case os.Geteuid() == 0:
		return "sandbox: tools run as uid " + strconv.Itoa(cfg.ToolUID) + " without capabilities, in a read-only view of the host"
	}
	return "sandbox: tools run as uid " + strconv.Itoa(os.Getuid()) + " without capabilities, state home and vault hidden"
}

// checkIsolation makes sure, once per Up, that the tools can be sandboxed
// as the configuration asks (ErrNoIsolation otherwise), and tells the user
// what the local runtime does not enforce: anything under isolation: none,
// and resource limits, never.
func checkIsolation(ctx context.Context, spec runtime.UpSpec, cub string) error {
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
	warn := func(string) {}
	if spec.WarnFunc != nil {
		warn = spec.WarnFunc
	}
	if cfg.Isolation == config.IsolationNone {
		msg := fmt.Sprintf("isolation: none: tools run as uid %d with everything that user can do, including reading %s, which holds the instance's Redis password, and writing the vault",
			os.Getuid(), instance.StateHome())
		if len(ro) > 0 {
			msg += fmt.Sprintf("; workspace.mode ro is not enforced for %s", strings.Join(ro, ", "))
		}
		warn(msg)
	} else {
		sb := tool.Sandbox{HelperPath: cub, Hide: toolHiddenDirs(spec), ToolUID: cfg.ToolUID}
		if err := sb.Probe(ctx, spec.Workspace); err != nil {
			return fmt.Errorf("%w (%v): tools would run as uid %d able to read %s, which holds the Redis password. "+
				"Use the Docker runtime, enable unprivileged user namespaces (as a user) or idmapped mounts (as root), "+
				"or set isolation: none in sett.yml to run them unisolated anyway (see docs/security.md)",
				ErrNoIsolation, firstLine(err), os.Getuid(), instance.StateHome())
		}
	}
	if len(limited) > 0 {
		warn(fmt.Sprintf("the local runtime does not apply resources (cpus, memory) or a pids limit: not enforced for %s", strings.Join(limited, ", ")))
	}
	return nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	return s
}

package tool

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
)

// sandboxFailExit is the sandbox helper's exit status when it could not
// set up the sandbox or start the tool; its reason is then the last line
// of stderr, after sandboxFailPrefix.
const (
	sandboxFailExit   = 125
	sandboxFailPrefix = "sett sandbox: "
)

// sandboxStartFailure reports whether a sandboxed run's exit status and
// stderr are the helper's own failure (the tool never ran), and its
// reason. A tool that exits 125 itself (docker run does) is not mistaken
// for one: the helper's reason line must end stderr.
func sandboxStartFailure(sb *Sandbox, exitCode int, stderrTail []byte) (string, bool) {
	if sb == nil || exitCode != sandboxFailExit {
		return "", false
	}
	lines := bytes.Split(bytes.TrimRight(stderrTail, "\n"), []byte("\n"))
	last := string(lines[len(lines)-1])
	why, ok := strings.CutPrefix(last, sandboxFailPrefix)
	if !ok {
		return "", false
	}
	return "the sandbox could not start the tool: " + why, true
}

// SandboxArg is the first argument that makes the cub binary act as the
// sandbox helper (see Sandbox) instead of a cub; cmd/cub dispatches on it.
const SandboxArg = "__sett-sandbox"

// Sandbox starts a tool in a private mount and pid namespace (Linux: as
// root, or in a user namespace of its own where the kernel lets ordinary
// users create them; see ProbeSandbox): the helper covers each
// Hide directory with an empty read-only tmpfs (the state home, where the
// Redis password is), bind-mounts each ReadOnly directory read-only over
// itself (a workspace of mode ro), mounts a /proc that shows only the
// tool's own processes (no other process's environment, command line or
// root directory), then runs the tool as its only child and reaps whatever
// it leaves. When the helper ends — the tool exited, or the helper was
// killed with its process group or by its parent-death signal — the kernel
// kills every process left in the namespace.
type Sandbox struct {
	// HelperPath is the executable that answers SandboxArg: the cub's own
	// binary.
	HelperPath string
	// Hide lists directories to cover with an empty tmpfs.
	Hide []string
	// ReadOnly lists directories to make read-only.
	ReadOnly []string
}

// sandboxRequest is what the helper receives as its second argument.
type sandboxRequest struct {
	Hide     []string `json:"hide,omitempty"`
	ReadOnly []string `json:"read_only,omitempty"`
	// Path and Args are the tool's program and argv; empty for a probe.
	Path string   `json:"path,omitempty"`
	Args []string `json:"args,omitempty"`
	// Relay asks the helper to start a second copy of itself in the new
	// namespaces instead of being started in them (see needsRelay).
	Relay bool `json:"relay,omitempty"`
}

// wrap makes cmd start the helper in new namespaces, with the tool's
// program and arguments in the request.
func (s *Sandbox) wrap(cmd *exec.Cmd) {
	relay := needsRelay()
	req, _ := json.Marshal(sandboxRequest{Hide: s.Hide, ReadOnly: s.ReadOnly, Path: cmd.Path, Args: cmd.Args, Relay: relay})
	cmd.Path = s.HelperPath
	cmd.Args = []string{s.HelperPath, SandboxArg, string(req)}
	if !relay {
		setNamespaces(cmd.SysProcAttr)
	}
}

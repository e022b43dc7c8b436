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

// Sandbox starts a tool in private mount, pid and IPC namespaces (Linux:
// as root, or in a user namespace of its own where the kernel lets
// ordinary users create them; see ProbeSandbox): the helper covers each
// Hide directory with an empty read-only tmpfs (the state home, where the
// Redis password is, and the vault), bind-mounts each ReadOnly directory
// read-only over itself (a workspace of mode ro), mounts a read-only /proc
// that shows only the tool's own processes (no other process's
// environment, command line or root directory), then runs the tool as its
// only child and reaps whatever it leaves. When the helper ends — the tool
// exited, or the helper was killed with its process group or by its
// parent-death signal — the kernel kills every process left in the
// namespace.
//
// The tool never holds a capability: every set (effective, permitted,
// inheritable, ambient, bounding) is empty and no_new_privs is set, so
// neither a setuid program nor file capabilities give any back. Started by
// root, the helper goes further, because uid 0 without capabilities still
// owns most of the host (/etc, root-owned devices and sockets such as the
// Docker socket): the tool runs as ToolUID (and the same gid, no
// supplementary groups) in a read-only view of the whole host, where only
// its workspace, a private /tmp, /var/tmp and /dev/shm are writable. The
// workspace is an idmapped mount in which its owner's files belong to
// ToolUID, so the tool can use it, and what it writes is stored as the
// owner's. An ancestor of the workspace that ToolUID could not traverse
// (such as /root) is covered by an empty directory tree leading to it.
//
// With a Fence, the helper is also the tool's lease watchdog: it kills
// every process of the namespace when the fence's deadline passes without
// a renewal, whether or not the cub that started it still runs.
type Sandbox struct {
	// HelperPath is the executable that answers SandboxArg: the cub's own
	// binary.
	HelperPath string
	// Hide lists directories to cover with an empty tmpfs.
	Hide []string
	// ReadOnly lists directories to make read-only.
	ReadOnly []string
	// ToolUID is the uid and gid a tool runs as when the helper runs as
	// root; zero means DefaultToolUID. Without root the tool keeps the
	// user's uid (in a user namespace).
	ToolUID int
}

// DefaultToolUID is the uid a root-started tool runs as when
// Sandbox.ToolUID is zero: the "nonroot" user of distroless images.
const DefaultToolUID = 65532

// sandboxRequest is what the helper receives as its second argument.
type sandboxRequest struct {
	Hide     []string `json:"hide,omitempty"`
	ReadOnly []string `json:"read_only,omitempty"`
	// Path and Args are the tool's program and argv; empty for a probe.
	Path string   `json:"path,omitempty"`
	Args []string `json:"args,omitempty"`
	// Workspace is the tool's working directory: in root mode the only
	// writable directory of the host, idmapped to ToolUID.
	Workspace string `json:"workspace,omitempty"`
	// ToolUID is Sandbox.ToolUID, defaulted.
	ToolUID int `json:"tool_uid,omitempty"`
	// Watch says that fd 3 carries the lease deadline (see Fence).
	Watch bool `json:"watch,omitempty"`
	// Park makes the helper wait for EOF on stdin and exit: it only
	// holds a user namespace open (see idmapUserns).
	Park bool `json:"park,omitempty"`
	// Relay asks the helper to start a second copy of itself in the new
	// namespaces instead of being started in them (see needsRelay).
	Relay bool `json:"relay,omitempty"`
}

// wrap makes cmd start the helper in new namespaces, with the tool's
// program and arguments in the request.
func (s *Sandbox) wrap(cmd *exec.Cmd, watch bool) {
	relay := needsRelay()
	req, _ := json.Marshal(sandboxRequest{Hide: s.Hide, ReadOnly: s.ReadOnly, Path: cmd.Path, Args: cmd.Args, Relay: relay,
		Workspace: cmd.Dir, ToolUID: s.toolUID(), Watch: watch})
	cmd.Path = s.HelperPath
	cmd.Args = []string{s.HelperPath, SandboxArg, string(req)}
	if !relay {
		setNamespaces(cmd.SysProcAttr)
	}
}

func (s *Sandbox) toolUID() int {
	if s.ToolUID > 0 {
		return s.ToolUID
	}
	return DefaultToolUID
}

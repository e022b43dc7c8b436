package config

import "strings"

// Isolation says how the local runtime isolates agents' tools.
type Isolation string

// Isolation modes.
const (
	// IsolationSandbox (the default) runs every tool in a sandbox: private
	// mount, pid and IPC namespaces, no capabilities, no_new_privs, the
	// state home and the vault hidden; run as root, the tool runs as
	// ToolUID in a read-only view of the host where only its workspace
	// and a private /tmp are writable. `sett up` refuses to start when
	// the host cannot build it.
	IsolationSandbox Isolation = "sandbox"
	// IsolationNone runs tools as the user that runs Sett, with nothing
	// hidden: they can read the Redis password. Only by explicit choice.
	IsolationNone Isolation = "none"
)

// DefaultToolUID is the uid and gid a root-started tool runs as: the
// "nonroot" user of distroless images, owned by nothing on a usual host.
const DefaultToolUID = 65532

// AllIsolations lists every Isolation.
func AllIsolations() []Isolation { return []Isolation{IsolationSandbox, IsolationNone} }

// Valid reports whether i is one of AllIsolations.
func (i Isolation) Valid() bool { return i == IsolationSandbox || i == IsolationNone }

func (c *Config) applyIsolationDefaults() {
	setDefault(c, &c.Isolation, IsolationSandbox, "isolation")
	setDefault(c, &c.ToolUID, DefaultToolUID, "tool_uid")
}

func (c *Config) validateIsolation(v *validator) {
	if !c.Isolation.Valid() {
		all := make([]string, 0, 2)
		for _, i := range AllIsolations() {
			all = append(all, string(i))
		}
		v.addf("isolation", "%q is not an isolation mode (use one of: %s)", c.Isolation, strings.Join(all, ", "))
	}
	if c.ToolUID <= 0 || c.ToolUID > 1<<31-2 {
		v.addf("tool_uid", "%d is not a uid a tool can run as (use an unprivileged uid above 0, e.g. 65532)", c.ToolUID)
	}
}

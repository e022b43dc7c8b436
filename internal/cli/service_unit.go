package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
)

// serviceUnit is what a systemd user unit for a local instance says.
type serviceUnit struct {
	// Name is the instance name.
	Name string
	// Workspace is the instance's workspace: the unit's WorkingDirectory.
	Workspace string
	// ConfigPath is sett.yml, absolute.
	ConfigPath string
	// Sett is the sett binary the unit runs, absolute.
	Sett string
	// Path is the PATH the instance runs with: a user manager's own is
	// minimal, and the local runtime finds redis-server and the agents'
	// commands on it.
	Path string
	// EnvFile is an optional environment file (a model's API key, say):
	// read when it exists.
	EnvFile string
}

// serviceName is the service's name for instance name, as systemctl
// takes it.
func serviceName(name string) string { return "sett-" + name }

// serviceUnitName is the unit's file name for instance name.
func serviceUnitName(name string) string { return serviceName(name) + ".service" }

// configHome is the user's configuration directory: XDG_CONFIG_HOME when
// absolute, else ~/.config. A user's systemd units go in its
// systemd/user.
func configHome(xdgConfigHome, home string) (string, error) {
	base := xdgConfigHome
	if base == "" || !filepath.IsAbs(base) { // the XDG spec ignores a relative value
		if home == "" {
			return "", fmt.Errorf("neither XDG_CONFIG_HOME nor HOME is set: set one of them to where your systemd user units go (~/.config/systemd/user)")
		}
		base = filepath.Join(home, ".config")
	}
	return base, nil
}

// renderServiceUnit is the unit file for u: `sett up --runtime local
// --foreground` in the workspace, restarted when it fails (the
// supervisor died) but not after `sett down` (it exits 0), stopped by
// SIGTERM to sett alone (KillMode=mixed: sett up stops the instance in
// order, Redis last; whatever is left after TimeoutStopSec is killed).
// It refuses values a unit file cannot hold.
func renderServiceUnit(u serviceUnit) (string, error) {
	for _, f := range []struct{ what, v string }{
		{"the instance name", u.Name}, {"the workspace", u.Workspace}, {"the configuration path", u.ConfigPath},
		{"the sett binary", u.Sett}, {"PATH", u.Path}, {"the environment file", u.EnvFile},
	} {
		if strings.IndexFunc(f.v, unicode.IsControl) >= 0 {
			return "", fmt.Errorf("%s %q has a control character (a newline, say), which a systemd unit cannot hold: rename it", f.what, f.v)
		}
	}
	for _, f := range []struct{ what, v string }{
		{"workspace", u.Workspace}, {"configuration path", u.ConfigPath}, {"sett binary", u.Sett},
	} {
		if !filepath.IsAbs(f.v) {
			return "", fmt.Errorf("the %s %q must be an absolute path in a unit", f.what, f.v)
		}
	}
	var s strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&s, format+"\n", a...) }
	w("# Written by `sett service install` for the Sett instance %s.", u.Name)
	w("# Remove it with `sett service uninstall --name %s` (after `systemctl --user disable --now %s`).", u.Name, serviceName(u.Name))
	w("# Sett's docs/operations.md, \"A local instance as a service\", says more.")
	w("[Unit]")
	w("Description=Sett instance %s (%s)", unitEscape(u.Name), unitEscape(u.Workspace))
	w("")
	w("[Service]")
	w("Type=exec")
	w("WorkingDirectory=%s", unitEscape(u.Workspace))
	if u.Path != "" {
		w("Environment=%s", unitQuote("PATH="+u.Path, false))
	}
	if u.EnvFile != "" {
		w("EnvironmentFile=-%s", unitEscape(u.EnvFile))
	}
	args := []string{u.Sett, "up", "--runtime", "local", "--name", u.Name, "--config", u.ConfigPath, "--foreground"}
	for i, a := range args {
		args[i] = unitQuote(a, true)
	}
	w("ExecStart=%s", strings.Join(args, " "))
	w("KillMode=mixed")
	w("TimeoutStopSec=90s")
	w("Restart=on-failure")
	w("RestartSec=5s")
	w("")
	w("[Install]")
	w("WantedBy=default.target")
	return s.String(), nil
}

// unitEscape escapes systemd's specifiers ("%") in a value that is not
// split into words.
func unitEscape(v string) string { return strings.ReplaceAll(v, "%", "%%") }

// unitQuote makes v one word of a unit's command line or Environment=:
// specifiers escaped, "$" doubled in a command line (else it expands a
// variable), and double quotes with backslash escapes around a value
// that needs them.
func unitQuote(v string, command bool) string {
	v = unitEscape(v)
	if command {
		v = strings.ReplaceAll(v, "$", "$$")
	}
	if v != "" && !strings.ContainsAny(v, " \t\"'\\;") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(v) + `"`
}

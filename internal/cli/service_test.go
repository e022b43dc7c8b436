package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The unit for a plain workspace, whole: what systemd reads.
const goldenUnit = `# Written by ` + "`sett service install`" + ` for the Sett instance notes.
# Remove it with ` + "`sett service uninstall --name notes`" + ` (after ` + "`systemctl --user disable --now sett-notes`" + `).
# Sett's docs/operations.md, "A local instance as a service", says more.
[Unit]
Description=Sett instance notes (/home/ada/notes)

[Service]
Type=exec
WorkingDirectory=/home/ada/notes
Environment=PATH=/home/ada/go/bin:/usr/local/bin:/usr/bin:/bin
EnvironmentFile=-/home/ada/.config/sett/notes.env
ExecStart=/usr/local/bin/sett up --runtime local --name notes --config /home/ada/notes/sett.yml --foreground
KillMode=mixed
TimeoutStopSec=90s
Restart=on-failure
RestartSec=5s

[Install]
WantedBy=default.target
`

func TestRenderServiceUnit(t *testing.T) {
	plain := serviceUnit{Name: "notes", Workspace: "/home/ada/notes", ConfigPath: "/home/ada/notes/sett.yml",
		Sett: "/usr/local/bin/sett", Path: "/home/ada/go/bin:/usr/local/bin:/usr/bin:/bin", EnvFile: "/home/ada/.config/sett/notes.env"}
	got, err := renderServiceUnit(plain)
	if err != nil {
		t.Fatal(err)
	}
	if got != goldenUnit {
		t.Errorf("unit:\n%s\nwant:\n%s", got, goldenUnit)
	}

	for _, tc := range []struct {
		name  string
		edit  func(u *serviceUnit)
		lines []string // lines the unit must have
		err   string   // the refusal, when refused
	}{
		{name: "spaces, a percent sign and a dollar",
			edit: func(u *serviceUnit) {
				u.Workspace, u.ConfigPath, u.Sett = "/home/ada/My Notes 100%", "/home/ada/My Notes 100%/sett.yml", "/opt/$ett/sett"
				u.Path = "/opt/my tools:/usr/bin"
			},
			lines: []string{
				"WorkingDirectory=/home/ada/My Notes 100%%",
				`Environment="PATH=/opt/my tools:/usr/bin"`,
				`ExecStart=/opt/$$ett/sett up --runtime local --name notes --config "/home/ada/My Notes 100%%/sett.yml" --foreground`,
			}},
		{name: "a quote and a backslash",
			edit:  func(u *serviceUnit) { u.ConfigPath = `/home/ada/a"b\c.yml` },
			lines: []string{`ExecStart=/usr/local/bin/sett up --runtime local --name notes --config "/home/ada/a\"b\\c.yml" --foreground`}},
		{name: "no PATH, no environment file",
			edit:  func(u *serviceUnit) { u.Path, u.EnvFile = "", "" },
			lines: []string{"Type=exec", "Restart=on-failure"}},
		{name: "a newline in the workspace", edit: func(u *serviceUnit) { u.Workspace = "/home/ada/a\nb" }, err: "control character"},
		{name: "a relative binary", edit: func(u *serviceUnit) { u.Sett = "bin/sett" }, err: "must be an absolute path"},
	} {
		u := plain
		tc.edit(&u)
		got, err := renderServiceUnit(u)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		have := map[string]bool{}
		for _, l := range strings.Split(got, "\n") {
			have[l] = true
		}
		for _, l := range tc.lines {
			if !have[l] {
				t.Errorf("%s: no line %q in\n%s", tc.name, l, got)
			}
		}
		if tc.name == "no PATH, no environment file" && (strings.Contains(got, "Environment=") || strings.Contains(got, "EnvironmentFile=")) {
			t.Errorf("%s: empty values written:\n%s", tc.name, got)
		}
	}
}

// systemd itself reads the units: `systemd-analyze --user verify` finds
// no fault in the plain one or in the one whose paths need quoting.
func TestServiceUnitPassesSystemdAnalyzeVerify(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the units were not verified by systemd (Debian: apt-get install systemd)")
		return
	}
	sett, err := os.Executable() // any existing program: verify checks that ExecStart's does
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	ws := filepath.Join(root, "My Notes 100%")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	runtimeDir := filepath.Join(root, "run")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i, u := range []serviceUnit{
		{Name: "notes", Workspace: root, ConfigPath: filepath.Join(root, "sett.yml"), Sett: sett, Path: "/usr/bin:/bin", EnvFile: filepath.Join(root, "notes.env")},
		{Name: "my-notes", Workspace: ws, ConfigPath: filepath.Join(ws, "sett.yml"), Sett: sett, Path: "/opt/my tools:/usr/bin"},
	} {
		unit, err := renderServiceUnit(u)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(root, "units", string(rune('a'+i)))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, serviceUnitName(u.Name))
		if err := os.WriteFile(p, []byte(unit), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(analyze, "--user", "verify", p)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir) // a user manager needs one, even for verify
		out, err := cmd.CombinedOutput()
		// verify exits 0 on values it ignores, only warning: any output is a fault.
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("systemd-analyze --user verify %s: %v\n%s\nunit:\n%s", p, err, out, unit)
		}
	}
}

func TestServiceInstallAndUninstall(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "sett.yml"), []byte("version: \"1.0\"\ninstance: notes\nagents:\n  a:\n    command: [\"true\"]\n    consumes: [\"GoalDefined\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	xdg := t.TempDir()
	sett, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": xdg, "HOME": "/nonexistent", "PATH": "/opt/tools:/usr/bin"}
	run := func(args ...string) (string, error) {
		t.Helper()
		out, errOut, err := runLifecycle(t, ws, nil, env, args...)
		return out + errOut, err
	}
	unitPath := filepath.Join(xdg, "systemd", "user", "sett-notes.service")

	out, err := run("service", "install", "--executable", sett)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Wrote " + unitPath,
		"systemctl --user daemon-reload && systemctl --user enable --now sett-notes\n",
		"loginctl enable-linger $USER",
		"sett down --name notes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("install does not say %q:\n%s", want, out)
		}
	}
	unit, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := renderServiceUnit(serviceUnit{Name: "notes", Workspace: ws, ConfigPath: filepath.Join(ws, "sett.yml"), Sett: sett,
		Path: "/opt/tools:/usr/bin", EnvFile: filepath.Join(xdg, "sett", "notes.env")})
	if string(unit) != want {
		t.Errorf("the unit written:\n%s\nwant:\n%s", unit, want)
	}
	if out, err := run("service", "install", "--executable", sett); err != nil || !strings.Contains(out, "is up to date") {
		t.Errorf("a second install: %v\n%s", err, out)
	}

	// Enabled (systemctl's link): uninstall refuses and says what to run.
	wants := filepath.Join(xdg, "systemd", "user", "default.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(wants, "sett-notes.service")
	if err := os.Symlink(unitPath, link); err != nil {
		t.Fatal(err)
	}
	if out, err := run("service", "uninstall"); err == nil || !strings.Contains(err.Error(), "systemctl --user disable --now sett-notes`") {
		t.Errorf("uninstall of an enabled unit: %v\n%s", err, out)
	}
	if _, err := os.Stat(unitPath); err != nil {
		t.Errorf("the refused uninstall removed the unit: %v", err)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	out, err = run("service", "uninstall")
	if err != nil || !strings.Contains(out, "Removed "+unitPath) || !strings.Contains(out, "systemctl --user daemon-reload") {
		t.Errorf("uninstall: %v\n%s", err, out)
	}
	if _, err := os.Stat(unitPath); !os.IsNotExist(err) {
		t.Errorf("the unit is still there: %v", err)
	}
	if _, err := run("service", "uninstall"); err == nil || !strings.Contains(err.Error(), "nothing to uninstall") {
		t.Errorf("a second uninstall: %v", err)
	}
}

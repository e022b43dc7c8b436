package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/config"
)

// newServiceCmd is `sett service install|uninstall`: a systemd user unit
// that keeps a local instance running across logins and reboots.
func newServiceCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service install|uninstall",
		Short: "Run a local instance as a systemd user service, so it survives a reboot",
		Long: `sett service install writes a systemd user unit,
$XDG_CONFIG_HOME/systemd/user/sett-NAME.service (default ~/.config/systemd/user),
that runs 'sett up --runtime local --foreground' for this workspace's
instance: systemd starts it at login (or at boot with lingering), restarts it
when it fails, and 'systemctl --user stop' stops it in order. It prints the
systemctl and loginctl commands that enable it; it runs none of them.
sett service uninstall removes the unit.`,
	}
	cmd.AddCommand(newServiceInstallCmd(app), newServiceUninstallCmd(app))
	return cmd
}

// serviceTarget is the instance a service command is about, and where
// its unit goes.
type serviceTarget struct {
	name, workspace, configPath string
	// configHome is XDG_CONFIG_HOME or ~/.config.
	configHome string
	unitPath   string
}

func resolveServiceTarget(app *App, configFlag string) (*serviceTarget, error) {
	ws, err := filepath.Abs(app.Workspace())
	if err != nil {
		return nil, err
	}
	cfgPath, err := filepath.Abs(resolveConfigPath(configFlag, app.env("SETT_CONFIG"), app.Dir, ws))
	if err != nil {
		return nil, err
	}
	fileInstance := ""
	cfg, _, err := config.Load(cfgPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("no configuration at %s: run `sett init` to create one, or pass --config", cfgPath)
	case err != nil:
		return nil, err
	default:
		fileInstance = cfg.Instance
	}
	name, err := resolveInstanceName(app.name, app.env("SETT_INSTANCE"), fileInstance, ws)
	if err != nil {
		return nil, err
	}
	home, err := configHome(app.env("XDG_CONFIG_HOME"), app.env("HOME"))
	if err != nil {
		return nil, err
	}
	return &serviceTarget{name: name, workspace: ws, configPath: cfgPath, configHome: home,
		unitPath: filepath.Join(home, "systemd", "user", serviceUnitName(name))}, nil
}

func newServiceInstallCmd(app *App) *cobra.Command {
	var configPath, executable string
	cmd := &cobra.Command{
		Use:   "install [--name NAME] [--config PATH] [--executable PATH]",
		Short: "Write a systemd user unit that runs this workspace's local instance",
		Long: `Write $XDG_CONFIG_HOME/systemd/user/sett-NAME.service (default
~/.config/systemd/user). The unit runs, in the workspace:

  sett up --runtime local --name NAME --config PATH --foreground

with the PATH of this shell (the local runtime finds redis-server and the
agents' commands on it) and, when it exists, the environment file
$XDG_CONFIG_HOME/sett/NAME.env (KEY=value lines: a model's API key, say).
Restart=on-failure restarts it when the instance's supervisor dies; after
'sett down' it stays stopped. Running it again rewrites the unit.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := resolveServiceTarget(app, configPath)
			if err != nil {
				return err
			}
			if executable == "" {
				if executable, err = os.Executable(); err != nil {
					return fmt.Errorf("cannot tell where this sett binary is (%v): pass --executable PATH", err)
				}
			}
			if executable, err = filepath.Abs(executable); err != nil {
				return err
			}
			if st, err := os.Stat(executable); err != nil || st.IsDir() {
				return fmt.Errorf("the sett binary %s cannot be run by the unit (%v): pass --executable with the path of sett", executable, err)
			}
			unit, err := renderServiceUnit(serviceUnit{
				Name: t.name, Workspace: t.workspace, ConfigPath: t.configPath, Sett: executable,
				Path: app.env("PATH"), EnvFile: filepath.Join(t.configHome, "sett", t.name+".env"),
			})
			if err != nil {
				return err
			}
			old, readErr := os.ReadFile(t.unitPath)
			if err := os.MkdirAll(filepath.Dir(t.unitPath), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(t.unitPath, []byte(unit), 0o644); err != nil {
				return fmt.Errorf("write the unit: %w", err)
			}
			out := cmd.OutOrStdout()
			unitName := serviceName(t.name)
			switch {
			case readErr != nil:
				fmt.Fprintf(out, "Wrote %s: it runs instance %s of %s in the foreground.\n", t.unitPath, t.name, t.workspace)
			case bytes.Equal(old, []byte(unit)):
				fmt.Fprintf(out, "%s is up to date.\n", t.unitPath)
			default:
				fmt.Fprintf(out, "Rewrote %s; if the service runs, apply it with `systemctl --user daemon-reload && systemctl --user restart %s`.\n", t.unitPath, unitName)
			}
			fmt.Fprintf(out, "\nIf the instance runs now, stop it first (the service starts its own): sett down --name %s\n", t.name)
			fmt.Fprintf(out, "Start it now and at every login:\n  systemctl --user daemon-reload && systemctl --user enable --now %s\n", unitName)
			fmt.Fprintf(out, "Keep it running when you are logged out, and start it at boot:\n  loginctl enable-linger $USER\n")
			fmt.Fprintf(out, "Follow it: systemctl --user status %s · journalctl --user -u %s · sett status --name %s\n", unitName, unitName, t.name)
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "path to sett.yml (default: sett.yml in the workspace; env SETT_CONFIG)")
	cmd.Flags().StringVar(&executable, "executable", "", "the sett binary the unit runs (default: this one)")
	return cmd
}

func newServiceUninstallCmd(app *App) *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "uninstall [--name NAME]",
		Short: "Remove the systemd user unit of this workspace's local instance",
		Long: `Remove sett-NAME.service from the systemd user units. Disable it first
(systemctl --user disable --now sett-NAME), which also stops the instance:
while the unit is enabled it is refused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			t, err := resolveServiceTarget(app, configPath)
			if err != nil {
				return err
			}
			unitName := serviceName(t.name)
			if _, err := os.Lstat(t.unitPath); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("there is no unit %s: nothing to uninstall (is --name right?)", t.unitPath)
			}
			// `systemctl enable` links the unit into default.target.wants/.
			wants := filepath.Join(filepath.Dir(t.unitPath), "default.target.wants", serviceUnitName(t.name))
			if _, err := os.Lstat(wants); err == nil {
				return fmt.Errorf("%s is enabled: disable it first with `systemctl --user disable --now %s` (that also stops the instance), then run sett service uninstall again", unitName, unitName)
			}
			if err := os.Remove(t.unitPath); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Removed %s.\n", t.unitPath)
			fmt.Fprintf(out, "Tell systemd: systemctl --user daemon-reload\n")
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "path to sett.yml (default: sett.yml in the workspace; env SETT_CONFIG)")
	return cmd
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/connect"
	"github.com/settdev/sett/internal/instance"
)

// recordlessDowner is implemented by runtimes that can find an instance
// without its record: one whose `sett up` was killed before it saved the
// record (and may still run), or one whose data a plain `sett down` kept
// (so that `sett down --purge` still deletes it). It reports whether it
// stopped anything and whether it deleted data.
type recordlessDowner interface {
	DownByName(ctx context.Context, workspace, name string, purge bool) (stopped, purged bool, err error)
}

func newDownCommand(app *App) *cobra.Command {
	var purge bool
	cmd := &cobra.Command{
		Use:   "down [--name NAME] [--purge]",
		Short: "Stop an instance; keep its data unless --purge",
		Long: `Stop every component of an instance and forget it. The instance is the one
of this workspace, or --name.

Its Redis data is kept, so the next 'sett up' with the same name continues
with every artefact and the whole audit trail. --purge deletes the data as
well, also for an instance that an earlier 'sett down' stopped.

A stack that Docker Compose started (docker-compose.yml; 'sett list' shows
it as "docker (compose)") is not stopped: 'sett down' refuses and names the
'docker-compose down' to run in the stack's directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDown(cmd, app, purge)
		},
	}
	cmd.Flags().BoolVar(&purge, "purge", false, "also delete the instance's data (Redis data, logs, password)")
	return cmd
}

func runDown(cmd *cobra.Command, app *App, purge bool) error {
	out := cmd.OutOrStdout()
	ws := app.Workspace()
	rec, err := instance.Find(ws, app.InstanceName())
	if errors.Is(err, instance.ErrNoInstance) {
		return downWithoutRecord(cmd, app, ws, purge, err)
	}
	if err != nil {
		return err
	}
	rt, err := app.runtimeOfRecord(rec.Name, rec.Runtime)
	if err != nil {
		return err
	}
	if err := rt.Down(cmd.Context(), rec, purge); err != nil {
		// The record stays, so that `sett down` can be run again.
		return fmt.Errorf("stop instance %s: %w", rec.Name, err)
	}
	// Stopped, the instance keeps its identity (name, workspace,
	// runtime): `sett list` shows it, `sett up` starts it again on the
	// same runtime. Purged, it is forgotten.
	if purge {
		err = instance.Remove(rec.Workspace, rec.Name)
	} else {
		err = instance.MarkStopped(rec.Workspace, rec.Name, app.now())
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Stopped instance %s (%s runtime).\n", rec.Name, rec.Runtime)
	_, ownRedis := rec.Components["redis"]
	switch {
	case !ownRedis && rec.Runtime == instance.RuntimeLocal:
		fmt.Fprintln(out, "Its Redis is external (services.redis.url) and was left as it is.")
	case purge && rec.StateDir != "":
		fmt.Fprintf(out, "Deleted its data: Redis data, password and logs in %s.\n", rec.StateDir)
	case purge:
		fmt.Fprintln(out, "Deleted its Redis data.")
	case rec.StateDir != "":
		fmt.Fprintf(out, "Kept its Redis data, password and logs in %s:\n", rec.StateDir)
		fmt.Fprintf(out, "`sett up --name %s --runtime %s` continues with every artefact; `sett down --name %s --purge` deletes them.\n", rec.Name, rec.Runtime, rec.Name)
	default:
		fmt.Fprintf(out, "Kept its Redis data: `sett up --name %s --runtime %s` continues with every artefact; `sett down --name %s --purge` deletes them.\n", rec.Name, rec.Runtime, rec.Name)
	}
	return nil
}

// downWithoutRecord serves `sett down` when no record exists: it asks
// every runtime that can to stop, and with purge delete, the instance
// name that `sett up` would use here. notFound is returned when no
// runtime found anything.
func downWithoutRecord(cmd *cobra.Command, app *App, ws string, purge bool, notFound error) error {
	fileInstance := ""
	cfgPath := resolveConfigPath("", app.env("SETT_CONFIG"), app.Dir, ws)
	if cfg, _, err := config.Load(cfgPath); err == nil {
		fileInstance = cfg.Instance
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	name, err := resolveInstanceName(app.name, app.env("SETT_INSTANCE"), fileInstance, ws)
	if err != nil {
		return err
	}
	if app.InstanceName() == "" && fileInstance == "" {
		// The workspace's only remembered instance, as `sett up` reuses it;
		// else the compose stack of this directory, as `sett status` finds
		// it (the Docker runtime refuses to stop that one, and says how).
		if recs, err := instance.InWorkspace(ws); err == nil && len(recs) == 1 {
			name = recs[0].Name
		} else if st, ok, err := connect.ComposeStackIn(app.Dir); err == nil && ok {
			name = st.Instance
		}
	}
	out := cmd.OutOrStdout()
	found := false
	for _, rtName := range app.runtimeNames() {
		d, ok := app.Runtimes[rtName].(recordlessDowner)
		if !ok {
			continue
		}
		stopped, purged, err := d.DownByName(cmd.Context(), ws, name, purge)
		if err != nil {
			return fmt.Errorf("stop instance %s: %w", name, err)
		}
		if stopped {
			found = true
			fmt.Fprintf(out, "Stopped instance %s (%s runtime), which had no record (its `sett up` was interrupted).\n", name, rtName)
		}
		if purged {
			found = true
			fmt.Fprintf(out, "Deleted the data kept for instance %s (%s runtime) in %s.\n", name, rtName, filepath.Clean(ws))
		}
	}
	// A record `sett down` kept: purged, it is forgotten; otherwise the
	// instance is already stopped.
	stopped, lerr := instance.Load(ws, name)
	if lerr != nil || !stopped.Stopped() {
		stopped = nil
	}
	switch {
	case stopped != nil && purge:
		if err := instance.Remove(ws, name); err != nil {
			return err
		}
		if !found {
			fmt.Fprintf(out, "Forgot instance %s (%s runtime), which was stopped.\n", name, stopped.Runtime)
		}
		return nil
	case found:
		return nil
	case stopped != nil:
		fmt.Fprintf(out, "Instance %s (%s runtime) is already stopped; its data is kept: `sett up --name %s --runtime %s` starts it again, `sett down --name %s --purge` deletes it.\n",
			name, stopped.Runtime, name, stopped.Runtime, name)
		return nil
	}
	return explainNoInstance(cmd.Context(), app, notFound)
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/local"
)

// foregroundLook is how often `sett up --foreground` looks whether the
// instance's supervisor still runs.
const foregroundLook = time.Second

// stayInForeground is the rest of `sett up --foreground` once rec is up:
// it waits while the instance runs. A signal (the command's context
// ending: SIGTERM from systemd, Ctrl-C) stops the instance as `sett down`
// does and returns nil; `sett down` run elsewhere ends the wait with nil
// too; a supervisor that died takes what is left of the instance down and
// returns an error, so that the exit status is 1 and a service manager
// restarts it.
func stayInForeground(cmd *cobra.Command, rt runtime.Runtime, rec *instance.Record) error {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Staying in the foreground: SIGTERM or Ctrl-C stops instance %s.\n", rec.Name)
	waitErr := local.WaitSupervisor(cmd.Context(), rec, foregroundLook)
	if waitErr == nil && cmd.Context().Err() == nil {
		fmt.Fprintf(out, "Instance %s was stopped (sett down).\n", rec.Name)
		return nil
	}
	if waitErr == nil {
		fmt.Fprintf(out, "Stopping instance %s.\n", rec.Name)
	}
	// Down also stops the components a dead supervisor left running.
	if err := rt.Down(context.WithoutCancel(cmd.Context()), rec, false); err != nil {
		return errors.Join(waitErr, fmt.Errorf("stop instance %s: %w", rec.Name, err))
	}
	// Remembered as stopped, as `sett down` leaves it: `sett list` shows it
	// and the next start (the service's, or `sett up`) reuses it.
	if err := instance.MarkStopped(rec.Workspace, rec.Name, time.Now()); err != nil {
		return errors.Join(waitErr, err)
	}
	if waitErr != nil {
		return waitErr
	}
	fmt.Fprintf(out, "Stopped instance %s (its data is kept).\n", rec.Name)
	return nil
}

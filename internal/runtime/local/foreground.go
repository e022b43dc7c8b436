package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/settdev/sett/internal/instance"
)

// ErrSupervisorDied is returned by WaitSupervisor when the supervisor of
// an instance ended without being asked to stop (killed, crashed): the
// instance is down and whoever runs it in the foreground (a systemd
// unit's Restart=on-failure) should start it again.
var ErrSupervisorDied = errors.New("local: the supervisor died")

// supervisorEnd decides, from one look at an instance, whether a
// foreground wait is over and how: alive is whether the supervisor runs;
// st is its status file (nil when unreadable) and planExists whether the
// plan file is still there (`sett down` removes it first, once the
// supervisor is gone). An instance stopped on purpose — its supervisor
// had begun to stop everything, or `sett down` removed the plan — ends
// the wait with nil; a supervisor that vanished otherwise is
// ErrSupervisorDied.
func supervisorEnd(alive bool, st *Status, planExists bool) (over bool, err error) {
	switch {
	case alive:
		return false, nil
	case !planExists || (st != nil && st.Stopping):
		return true, nil
	default:
		return true, ErrSupervisorDied
	}
}

// WaitSupervisor blocks while the supervisor of rec runs, looking every
// `every`: it returns nil when ctx ends (the caller then stops the
// instance) or when the instance was stopped on purpose (`sett down`),
// and an error wrapping ErrSupervisorDied, naming the supervisor's log,
// when the supervisor ended otherwise. It is what `sett up --foreground`
// waits in.
func WaitSupervisor(ctx context.Context, rec *instance.Record, every time.Duration) error {
	sd, err := checkStateDir(rec)
	if err != nil {
		return err
	}
	pid := rec.SupervisorPID
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		st, _ := ReadStatus(sd.statusFile())
		_, perr := os.Stat(sd.planFile())
		over, err := supervisorEnd(supervisorRunning(pid, sd), st, perr == nil)
		if err != nil {
			return fmt.Errorf("%w (pid %d; its log: %s): instance %s is down", err, pid, sd.supervisorLog(), rec.Name)
		}
		if over {
			return nil
		}
	}
}

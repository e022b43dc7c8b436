package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/settdev/sett/internal/instance"
)

// stopPoll is how often a stop checks whether the processes are gone.
const stopPoll = 50 * time.Millisecond

// Down stops the instance: SIGTERM to its supervisor, which stops the
// components (Redis last), then a wait of at most DownTimeout until the
// supervisor is gone. A supervisor that does not exit in time — or ctx
// ending — gets SIGKILL. Components that the status file still names as
// running (their supervisor was killed, or gave up) are then stopped
// directly: SIGTERM, then SIGKILL of their process group, Redis last.
// Finally the plan, status and Redis configuration files are removed.
//
// Without purge the Redis data, its password and the logs stay in the
// state directory, so a later Up of the same name continues where this
// one stopped. With purge the whole state directory goes. An instance on
// an external Redis (services.redis.url) keeps its data there either way:
// Down never deletes keys from a Redis it did not start.
//
// Down of an instance that is already stopped succeeds. It returns
// ErrBadRecord when rec does not name a state directory of its workspace.
func (r *Runtime) Down(ctx context.Context, rec *instance.Record, purge bool) error {
	sd, err := checkStateDir(rec)
	if err != nil {
		return err
	}
	pid := rec.SupervisorPID
	if st, err := ReadStatus(sd.statusFile()); err == nil && st.SupervisorPID != 0 {
		pid = st.SupervisorPID // the status file is the supervisor's own word
	}
	stopInstance(ctx, pid, sd, r.downTimeout())
	for _, p := range []string{sd.planFile(), sd.statusFile(), sd.redisConf()} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("local: %w", err)
		}
	}
	if purge {
		if err := os.RemoveAll(sd.path()); err != nil {
			return fmt.Errorf("local: purge %s: %w", sd, err)
		}
		// The parent holds only instance state directories; drop it when
		// this was the last one.
		_ = os.Remove(filepath.Dir(sd.path()))
	}
	return nil
}

// supervisorRunning reports whether pid is alive and is the supervisor of
// this state directory (its command line names the plan file), so that a
// recycled pid is never taken for a supervisor. Where command lines
// cannot be read, a live pid counts.
func supervisorRunning(pid int, sd stateDir) bool {
	if !processAlive(pid) {
		return false
	}
	argv, ok := processCmdline(pid)
	return !ok || slices.Contains(argv, sd.planFile())
}

// componentRunning reports whether pid is alive and runs program, so
// that a recycled pid is never killed. The executable is compared where
// the system shows it (program resolved through symlinks: Debian's
// redis-server is a link); else the command line, whose first word is
// enough because Redis rewrites its command line into one string
// ("/usr/bin/redis-server 127.0.0.1:6379"). Where neither can be read, a
// live pid counts.
func componentRunning(pid int, program string) bool {
	if !processAlive(pid) {
		return false
	}
	if program == "" {
		return true
	}
	if exe, ok := processExe(pid); ok {
		want, err := filepath.EvalSymlinks(program)
		if err != nil {
			want = program
		}
		return exe == want
	}
	argv, ok := processCmdline(pid)
	if !ok {
		return true
	}
	return len(argv) > 0 && (argv[0] == program || strings.HasPrefix(argv[0], program+" "))
}

// stopInstance stops the supervisor pid of sd and waits until it is gone
// (bounded by timeout and ctx; then SIGKILL), then stops whatever
// components it left running.
func stopInstance(ctx context.Context, pid int, sd stateDir, timeout time.Duration) {
	if supervisorRunning(pid, sd) {
		_ = terminate(pid)
		if !waitGone(ctx, pid, timeout) {
			_ = killProcess(pid)
			waitGone(context.WithoutCancel(ctx), pid, 5*time.Second)
		}
	}
	stopLeftovers(ctx, sd)
}

// stopLeftovers stops the components that the status file of sd names
// and that still run without their supervisor (it was killed, or did not
// stop in time): the daemons first, Redis last, each group with SIGTERM
// and, after DefaultStopTimeout, SIGKILL — so that Redis still gets to
// flush its append-only file.
func stopLeftovers(ctx context.Context, sd stateDir) {
	st, err := ReadStatus(sd.statusFile())
	if err != nil {
		return
	}
	var daemons, redis []int
	for name, cs := range st.Components {
		if cs.PID == 0 || !componentRunning(cs.PID, cs.Argv0) {
			continue
		}
		if name == ComponentRedis {
			redis = append(redis, cs.PID)
		} else {
			daemons = append(daemons, cs.PID)
		}
	}
	for _, group := range [][]int{daemons, redis} {
		for _, pid := range group {
			_ = terminate(pid)
		}
		for _, pid := range group {
			if !waitGone(ctx, pid, DefaultStopTimeout) {
				_ = killGroup(pid)
				waitGone(context.WithoutCancel(ctx), pid, 5*time.Second)
			}
			_ = killGroup(pid) // whatever it left in its group
		}
	}
}

// waitGone polls until pid is gone; false when timeout or ctx ended first.
func waitGone(ctx context.Context, pid int, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(stopPoll)
	defer tick.Stop()
	for processAlive(pid) {
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
	return true
}

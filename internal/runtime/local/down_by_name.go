package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/instance"
)

// DownByName is Down for an instance that has no record: one whose
// `sett up` was killed before it could save the record (its supervisor
// may still run), or one whose data an earlier Down kept. It finds the
// state directory of name in workspace, stops a supervisor that still
// runs there (as Down does) and, with purge, deletes the directory.
//
// It reports whether it stopped anything and whether it deleted anything;
// both are false when the state directory does not exist.
func (r *Runtime) DownByName(ctx context.Context, workspace, name string, purge bool) (stopped, purged bool, err error) {
	if err := blackboard.ValidateInstance(name); err != nil {
		return false, false, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return false, false, fmt.Errorf("local: %w", err)
	}
	sd := stateDirOf(ws, name)
	if _, err := os.Stat(sd.path()); errors.Is(err, os.ErrNotExist) {
		sd = legacyStateDirOf(ws, name)
		if _, err := os.Stat(sd.path()); errors.Is(err, os.ErrNotExist) {
			return false, false, nil
		}
	}
	if st, err := ReadStatus(sd.statusFile()); err == nil && supervisorRunning(st.SupervisorPID, sd) {
		stopped = true
	}
	rec := &instance.Record{Name: name, Runtime: instance.RuntimeLocal, Workspace: ws, StateDir: sd.path()}
	if err := r.Down(ctx, rec, purge); err != nil {
		return stopped, false, err
	}
	return stopped, purge, nil
}

// StateDir returns the state directory the local runtime uses for the
// instance name of workspace.
func StateDir(workspace, name string) string { return stateDirOf(workspace, name).path() }

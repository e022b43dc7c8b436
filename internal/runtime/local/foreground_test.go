package local

import (
	"errors"
	"testing"
)

func TestSupervisorEnd(t *testing.T) {
	for _, tc := range []struct {
		name       string
		alive      bool
		st         *Status
		planExists bool
		over       bool
		died       bool
	}{
		{name: "running", alive: true, st: &Status{}, planExists: true},
		{name: "running while stopping", alive: true, st: &Status{Stopping: true}, planExists: true},
		{name: "stopped by a signal it handled", st: &Status{Stopping: true}, planExists: true, over: true},
		{name: "sett down removed its files", over: true},
		{name: "sett down removed the plan, not yet the status", st: &Status{}, over: true},
		{name: "killed (SIGKILL) or crashed", st: &Status{}, planExists: true, over: true, died: true},
		{name: "killed, its status unreadable", planExists: true, over: true, died: true},
	} {
		over, err := supervisorEnd(tc.alive, tc.st, tc.planExists)
		if over != tc.over || errors.Is(err, ErrSupervisorDied) != tc.died {
			t.Errorf("%s: over=%v err=%v, want over=%v died=%v", tc.name, over, err, tc.over, tc.died)
		}
	}
}

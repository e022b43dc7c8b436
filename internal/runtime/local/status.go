package local

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"
)

// ChildState is where a supervised component is in its life.
type ChildState string

// Child states.
const (
	// ChildWaiting: not started yet (its stage waits for the previous one).
	ChildWaiting ChildState = "waiting"
	// ChildRunning: the process runs (it may not be ready yet).
	ChildRunning ChildState = "running"
	// ChildBackoff: the process exited unexpectedly; a restart is due.
	ChildBackoff ChildState = "backoff"
	// ChildStopping: the supervisor is stopping it.
	ChildStopping ChildState = "stopping"
	// ChildStopped: stopped by the supervisor.
	ChildStopped ChildState = "stopped"
)

// AllChildStates lists every child state.
func AllChildStates() []ChildState {
	return []ChildState{ChildWaiting, ChildRunning, ChildBackoff, ChildStopping, ChildStopped}
}

// Valid reports whether s is a known child state.
func (s ChildState) Valid() bool { return slices.Contains(AllChildStates(), s) }

// Status is what the supervisor reports about itself and its components,
// in <state>/status.json. It is rewritten atomically on every change, so
// readers see a whole snapshot; PIDs of running components are current.
type Status struct {
	// SupervisorPID is the supervisor's own pid.
	SupervisorPID int `json:"supervisor_pid"`
	// Stopping is set once the supervisor has begun to stop everything.
	Stopping bool `json:"stopping,omitempty"`
	// Components by name.
	Components map[string]ComponentStatus `json:"components"`
}

// ComponentStatus is one component in a Status.
type ComponentStatus struct {
	State ChildState `json:"state"`
	// PID is the current process (0 when none runs). It is also its
	// process group id.
	PID int `json:"pid,omitempty"`
	// Argv0 is the program, to recognise the process by.
	Argv0 string `json:"argv0,omitempty"`
	// Starts counts how many times the process was started.
	Starts int `json:"starts"`
	// StartedAt is when the current or last process started.
	StartedAt time.Time `json:"started_at,omitzero"`
	// LastExit describes how the previous process ended ("exit status 2").
	LastExit string `json:"last_exit,omitempty"`
}

// Restarts is how many times the component was started again after its
// first start.
func (c ComponentStatus) Restarts() int { return max(c.Starts-1, 0) }

// ReadStatus reads the status file of a state directory (see
// StatusPath). A missing file gives an error wrapping os.ErrNotExist.
func ReadStatus(path string) (*Status, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("local: read status: %w", err)
	}
	var s Status
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("local: status %s is corrupt: %w", path, err)
	}
	return &s, nil
}

// StatusPath is the supervisor's status file in a state directory.
func StatusPath(stateDirPath string) string { return stateDir(stateDirPath).statusFile() }

func writeStatus(path string, s *Status) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("local: encode status: %w", err)
	}
	return writeFileAtomic(path, append(b, '\n'), 0o600)
}

package tool

import (
	"os/exec"
	"sync"
)

// children tracks the processes Run started and has not yet waited for,
// so that a reaper running as PID 1 (ReapOrphans) leaves them to Run's own
// Wait. startMu orders the two: Run holds it for reading from fork to
// registration, the reaper for writing while it reaps, so the reaper never
// sees a child of Run that is not registered yet.
var (
	startMu  sync.RWMutex
	childMu  sync.Mutex
	children = map[int]bool{}
)

func registerChild(pid int) {
	childMu.Lock()
	children[pid] = true
	childMu.Unlock()
}

func unregisterChild(pid int) {
	childMu.Lock()
	delete(children, pid)
	childMu.Unlock()
}

func isOwnChild(pid int) bool {
	childMu.Lock()
	defer childMu.Unlock()
	return children[pid]
}

// RunTracked runs cmd to completion like cmd.Run, registered as one of
// this process's own children so that ReapOrphans leaves it to cmd.Wait.
// Every child a cub starts outside Run must go through it.
func RunTracked(cmd *exec.Cmd) error {
	startMu.RLock()
	err := cmd.Start()
	if err == nil {
		registerChild(cmd.Process.Pid)
	}
	startMu.RUnlock()
	if err != nil {
		return err
	}
	defer unregisterChild(cmd.Process.Pid)
	return cmd.Wait()
}

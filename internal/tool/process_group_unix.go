//go:build unix

package tool

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup makes the child the leader of a new process group whose id
// is its pid, so that killProcessGroup reaches every descendant that did not
// leave the group on purpose.
//
// Pdeathsig is deliberately not set: on Linux it fires when the OS thread
// that started the child exits, which the Go runtime may do at any time.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup sends SIGKILL to the whole process group led by p. A
// group that no longer exists is not an error.
//
// When the leader has already been reaped, its pid could in theory be reused
// by a new group leader between the reap and this call; the window is a few
// microseconds against a full cycle of the pid space, which we accept rather
// than keep the leader as a zombie.
func killProcessGroup(p *os.Process) error {
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("tool: kill process group %d: %w", p.Pid, err)
	}
	return nil
}

// signalProcessGroup sends sig to the whole process group led by p; a
// group that no longer exists is not an error.
func signalProcessGroup(p *os.Process, sig syscall.Signal) error {
	err := syscall.Kill(-p.Pid, sig)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("tool: signal process group %d: %w", p.Pid, err)
	}
	return nil
}

// exitSignal describes the signal that terminated the process, and reports
// false when it exited on its own.
func exitSignal(state *os.ProcessState) (string, bool) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	sig := ws.Signal()
	return fmt.Sprintf("signal %d (%s)", int(sig), sig), true
}

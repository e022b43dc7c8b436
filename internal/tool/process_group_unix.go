//go:build unix

package tool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// setProcessGroup makes the child the leader of a new process group whose id
// is its pid, so that killProcessGroup reaches every descendant that did not
// leave the group on purpose, and (on Linux) asks for SIGKILL when its
// parent dies. Pdeathsig fires when the OS thread that started the child
// exits, so Run starts and waits for the child on one locked thread.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(cmd.SysProcAttr)
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

// killGroupID sends SIGKILL to the process group pgid; a group that no
// longer exists is not an error.
func killGroupID(pgid int) error {
	err := syscall.Kill(-pgid, syscall.SIGKILL)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// groupExists reports whether a process of group pgid is left that is
// not a zombie. Zombies count as gone: they run nothing, and a zombie
// whose parent is gone is reaped by init.
func groupExists(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return true // no /proc: trust kill(2)
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok && st.pgrp == pgid && st.state != 'Z' {
			return true
		}
	}
	return false
}

// procStat is what the tool package reads of /proc/<pid>/stat.
type procStat struct {
	state      byte
	pgrp       int
	startTicks uint64
}

// readStat parses /proc/<pid>/stat; ok is false where there is none.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command name is in parentheses and may hold anything; the
	// fields after the last ')' start with the state (field 3).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return procStat{}, false
	}
	pgrp, _ := strconv.Atoi(f[2])                // field 5
	ticks, _ := strconv.ParseUint(f[19], 10, 64) // field 22
	return procStat{state: f[0][0], pgrp: pgrp, startTicks: ticks}, true
}

// processStartTicks is the start time of pid in clock ticks since boot.
func processStartTicks(pid int) (uint64, bool) {
	st, ok := readStat(pid)
	return st.startTicks, ok
}

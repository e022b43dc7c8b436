//go:build unix

package local

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

const supported = true

// sessionAttr makes the supervisor the leader of a new session, detached
// from the terminal of `sett up`: it outlives that command and does not
// receive the terminal's signals.
func sessionAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// groupAttr makes a component the leader of its own process group, so
// that killing the group reaches whatever it started and left in it.
//
// Pdeathsig is deliberately not set (as in internal/tool): on Linux it
// fires when the OS thread that started the child exits, which the Go
// runtime may do at any time. A supervisor that dies without stopping its
// components leaves them to Down, which kills them from the status file.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// processAlive reports whether pid names a process that has not exited
// (a zombie, exited but not yet reaped, counts as gone).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	return !isZombie(pid)
}

// isZombie reads the process state from /proc where there is one.
func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name, which may itself
	// hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z'
}

// processCmdline returns the command line of pid; ok is false where it
// cannot be read (no /proc, or the process is gone).
func processCmdline(pid int) (argv []string, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil, false
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), true
}

// processExe returns the executable that pid runs; ok is false where it
// cannot be read. A binary replaced on disk while it runs (a rebuild)
// still counts as its path.
func processExe(pid int) (path string, ok bool) {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return "", false
	}
	return strings.TrimSuffix(p, " (deleted)"), true
}

// terminate sends SIGTERM to one process.
func terminate(pid int) error { return ignoreGone(syscall.Kill(pid, syscall.SIGTERM)) }

// killGroup sends SIGKILL to the process group pgid.
func killGroup(pgid int) error {
	if pgid <= 1 {
		return nil
	}
	return ignoreGone(syscall.Kill(-pgid, syscall.SIGKILL))
}

// killProcess sends SIGKILL to one process.
func killProcess(pid int) error { return ignoreGone(syscall.Kill(pid, syscall.SIGKILL)) }

func ignoreGone(err error) error {
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

//go:build !unix

package local

import (
	"os"
	"syscall"
)

// Process sessions, groups and signals are Unix notions; elsewhere the
// package compiles (the CLI links it everywhere) but Up refuses to run.

const supported = false

func sessionAttr() *syscall.SysProcAttr { return nil }

func groupAttr() *syscall.SysProcAttr { return nil }

func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return pid > 0 && err == nil && p != nil
}

func processCmdline(int) ([]string, bool) { return nil, false }

func processExe(int) (string, bool) { return "", false }

func terminate(pid int) error { return killProcess(pid) }

func killGroup(pgid int) error { return killProcess(pgid) }

func killProcess(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	if err := p.Kill(); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}

package tool

import "syscall"

// setParentDeathSignal makes the kernel SIGKILL the child when the thread
// that started it dies — with the cub, however the cub dies.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

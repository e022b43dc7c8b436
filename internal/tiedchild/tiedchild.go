// Package tiedchild starts helper processes that must die with the
// process that started them (test and bench harnesses: redis-server, the
// daemons), without dying before it.
//
// Linux delivers the parent-death signal (SysProcAttr.Pdeathsig) when the
// thread that forked the child ends, not the process. A Go thread ends
// when a goroutine locked to it returns (the cub's tool spawners, the
// harnesses' own locked helpers), and the runtime may have forked the child
// on any of its threads; so a child started the plain way can be killed
// at a random moment, long before its parent exits. Start forks the child
// on a goroutine that locks its thread for the child's whole life: no
// other goroutine can run there, so nothing else can end that thread, and
// the goroutine unlocks it after the child exited, so the thread goes back
// to the runtime instead of ending with it.
package tiedchild

import (
	"os/exec"
	"runtime"
	"syscall"
)

// Start starts cmd in its own process group with SIGKILL as its
// parent-death signal, tied to this process as described above. exited is
// closed when cmd has been waited for (cmd.ProcessState is then set);
// callers must not call cmd.Wait themselves.
func Start(cmd *exec.Cmd) (exited <-chan struct{}, err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}

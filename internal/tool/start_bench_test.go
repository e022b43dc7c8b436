//go:build linux

package tool

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// How a tool is started costs little next to what the started program
// costs itself (exec, page faults, its runtime's start): Go's os/exec
// already forks with CLONE_VFORK|CLONE_VM (the parent's page tables are
// not copied, the posix_spawn way), and the SysProcAttr options Run sets
// (own process group, parent-death signal) are one syscall each in the
// child. These benchmarks show it, per start of the static test fixture:
//
//	go test -run '^$' -bench Start -benchtime 500x ./internal/tool/
//
// child-cpu-µs is the child's user+system time, parent-cpu-µs the
// benchmark process's own (fork, pipes, wait) per start.

// BenchmarkStartOSExec: exec.Cmd with nothing set.
func BenchmarkStartOSExec(b *testing.B) {
	benchStart(b, func(path string) error {
		return exec.Command(path, "exit", "0", "x").Run()
	})
}

// BenchmarkStartOSExecRunAttrs: exec.Cmd with the attributes Run sets.
func BenchmarkStartOSExecRunAttrs(b *testing.B) {
	benchStart(b, func(path string) error {
		cmd := exec.Command(path, "exit", "0", "x")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		return cmd.Run()
	})
}

// BenchmarkStartForkExec: syscall.ForkExec and Wait4, no os/exec.
func BenchmarkStartForkExec(b *testing.B) {
	benchStart(b, func(path string) error {
		pid, err := syscall.ForkExec(path, []string{path, "exit", "0", "x"},
			&syscall.ProcAttr{Sys: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}})
		if err != nil {
			return err
		}
		var ws syscall.WaitStatus
		_, err = syscall.Wait4(pid, &ws, 0, nil)
		return err
	})
}

// BenchmarkStartToolRun: the whole tool.Run (pipes, spawner thread,
// stdin, output capture).
func BenchmarkStartToolRun(b *testing.B) {
	benchStart(b, func(path string) error {
		r := Run(context.Background(), Spec{Command: []string{path, "exit", "0", "x"}, Dir: os.TempDir(),
			Env: []string{"PATH=/usr/bin:/bin"}, Timeout: time.Minute})
		if r.Failure != "" && r.Failure != FailureExitNonzero {
			return &os.PathError{Op: "run", Path: path, Err: syscall.EINVAL}
		}
		return nil
	})
}

func benchStart(b *testing.B, start func(path string) error) {
	path := fixture(b)
	var self0, kids0 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := start(path); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var self1, kids1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids1)
	cpu := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	b.ReportMetric(float64((cpu(kids1)-cpu(kids0)).Microseconds())/float64(b.N), "child-cpu-µs")
	b.ReportMetric(float64((cpu(self1)-cpu(self0)).Microseconds())/float64(b.N), "parent-cpu-µs")
}

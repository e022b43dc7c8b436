package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Default output caps, used when Spec leaves them at zero.
const (
	// DefaultMaxStdout is the default cap on a tool's stdout, in bytes.
	DefaultMaxStdout = 4 << 20
	// DefaultMaxStderr is the default cap on the stderr kept, in bytes.
	DefaultMaxStderr = 4 << 20
)

// drainTimeout bounds how long Run keeps reading the pipes after the tool
// and its process group are gone. Only a descendant that left the group
// (setsid, a double fork into a new group) can still hold them open; Run
// then stops reading rather than wait for it.
const drainTimeout = 2 * time.Second

// Spec says how to run a tool once. The zero value is not runnable: Command
// must name a program.
type Spec struct {
	// Command is the argv of the tool. A Command[0] without a slash is
	// searched in the PATH of Env (the child's), not in the cub's; relative
	// PATH entries are not searched. A Command[0] with a slash is used as
	// it is, relative to Dir.
	Command []string
	// Dir is the working directory of the tool (the workspace); "" means
	// the cub's working directory.
	Dir string
	// Env is the complete environment of the tool, normally built by
	// ScrubbedEnv. A nil Env gives the tool an empty environment; it never
	// inherits the cub's.
	Env []string
	// Stdin is written to the tool's stdin, which is then closed. A tool
	// that exits without reading it is not an error.
	Stdin []byte
	// Timeout bounds the run from the start of the process; when it
	// expires the whole process group is killed. Zero means no timeout.
	Timeout time.Duration
	// MaxStdout caps the stdout kept, in bytes; more is a
	// FailureStdoutTooLarge and kills the process group at once. Zero or
	// less means DefaultMaxStdout.
	MaxStdout int
	// MaxStderr caps the stderr kept in Result.Stderr, in bytes; the rest
	// is counted and tailed, and is not a failure. Zero or less means
	// DefaultMaxStderr.
	MaxStderr int
	// StopGrace is how long a tool stopped by a timeout or a cancellation
	// gets between SIGTERM and SIGKILL of its group, to stop cleanly. Zero
	// means SIGKILL at once.
	StopGrace time.Duration
	// Ledger, when set, records the tool's process group while it runs,
	// so that the next cub kills it if this one dies (Ledger.KillLeftovers).
	Ledger *Ledger
	// Sandbox, when set, starts the tool in private namespaces (see
	// Sandbox); nil runs it directly.
	Sandbox *Sandbox
	// Fence, with a Sandbox, is the deadline the sandbox's helper kills
	// the tool at unless it is extended (the lease's); nil means none.
	// Without a Sandbox the tool gets the deadlines itself on fd 3
	// (EnvLeaseFD): the controller's launcher (internal/worker) removes
	// its worker container when they pass; other tools may ignore it.
	Fence *Fence
}

// FailureKind says why a run did not succeed. The empty string means it did.
type FailureKind string

// The failure kinds, as they appear in Failure artefacts and events.
const (
	// FailureStartFailed: the process could not be started (program not
	// found or not executable, bad working directory, no command).
	FailureStartFailed FailureKind = "start_failed"
	// FailureExitNonzero: the process exited with a status other than 0.
	FailureExitNonzero FailureKind = "exit_nonzero"
	// FailureSignaled: the process was terminated by a signal that Run did
	// not send (a crash, or an OOM kill).
	FailureSignaled FailureKind = "signaled"
	// FailureTimeout: Spec.Timeout expired and Run killed the process group.
	FailureTimeout FailureKind = "timeout"
	// FailureStdoutTooLarge: stdout exceeded Spec.MaxStdout and Run killed
	// the process group.
	FailureStdoutTooLarge FailureKind = "stdout_too_large"
	// FailureCanceled: the context was done before or during the run; Run
	// killed the process group if it had started.
	FailureCanceled FailureKind = "canceled"
)

// ErrStopNow, as the cause of a run's cancellation
// (context.WithCancelCause), kills the tool's process group at once
// instead of asking first with SIGTERM and waiting StopGrace: its work
// may already belong to someone else (a lease that could not be renewed).
var ErrStopNow = errors.New("tool: stop at once")

// AllFailureKinds returns every valid FailureKind. The slice is new on each
// call.
func AllFailureKinds() []FailureKind {
	return []FailureKind{
		FailureStartFailed, FailureExitNonzero, FailureSignaled,
		FailureTimeout, FailureStdoutTooLarge, FailureCanceled,
	}
}

// Valid reports whether k is one of AllFailureKinds. The empty string (a
// successful run) is not a valid failure kind.
func (k FailureKind) Valid() bool {
	switch k {
	case FailureStartFailed, FailureExitNonzero, FailureSignaled,
		FailureTimeout, FailureStdoutTooLarge, FailureCanceled:
		return true
	}
	return false
}

// Result is what Run observed. Failure is "" when the tool exited with
// status 0 within its limits; Stdout is then what ParseOutput reads.
type Result struct {
	// ExitCode is the exit status of the process, or -1 when it did not
	// start or did not exit on its own (killed by a signal).
	ExitCode int
	// Stdout holds the first MaxStdout bytes of stdout.
	Stdout []byte
	// Stderr holds the first MaxStderr bytes of stderr, for logging.
	Stderr []byte
	// StdoutTail and StderrTail hold the last 4 KiB of each stream (of
	// everything produced, beyond the caps too), for failure reports.
	// They may start or end inside a UTF-8 sequence.
	StdoutTail []byte
	StderrTail []byte
	// Duration is the wall time of Run, measured on the monotonic clock.
	Duration time.Duration
	// Failure says why the run failed, "" on success.
	Failure FailureKind
	// Detail is one human sentence about the failure, such as "exit status
	// 3", "killed after timeout of 2s" or "stdout exceeded 4194304 bytes";
	// "" on success.
	Detail string
	// StdoutBytes and StderrBytes count every byte produced, beyond the
	// caps too.
	StdoutBytes int64
	StderrBytes int64
}

// Run runs the tool described by s and waits for it and its process group.
//
// The tool is started in its own process group. On timeout, when ctx is
// done, or as soon as stdout exceeds its cap, Run sends SIGKILL to the whole
// group, so grandchildren die too. When the tool exits, whatever remains of
// its group is killed as well, so no descendant outlives the run or keeps the
// output pipes open; Run never waits more than drainTimeout for a
// descendant that left the group.
//
// Run never returns an error: every problem is described by Result.Failure
// and Result.Detail. It is safe for concurrent use.
func Run(ctx context.Context, s Spec) (res Result) {
	start := time.Now() // carries a monotonic reading, which time.Since uses
	defer func() { res.Duration = time.Since(start) }()
	res.ExitCode = -1

	if ctx.Err() != nil {
		res.Failure = FailureCanceled
		res.Detail = "canceled before start: " + context.Cause(ctx).Error()
		return res
	}
	if len(s.Command) == 0 {
		res.Failure = FailureStartFailed
		res.Detail = "no command to run"
		return res
	}
	path, err := lookPath(s.Command[0], s.Env)
	if err != nil {
		res.Failure = FailureStartFailed
		res.Detail = "cannot start: " + err.Error()
		return res
	}
	if err := checkProgram(path, s.Dir); err != nil {
		res.Failure = FailureStartFailed
		res.Detail = err.Error()
		return res
	}

	maxStdout, maxStderr := s.MaxStdout, s.MaxStderr
	if maxStdout <= 0 {
		maxStdout = DefaultMaxStdout
	}
	if maxStderr <= 0 {
		maxStderr = DefaultMaxStderr
	}
	env := s.Env
	if env == nil {
		env = []string{} // a nil Env would make os/exec pass the cub's environment
	}

	// The pipes are ours rather than os/exec's: the child gets *os.File
	// ends, so cmd.Wait returns as soon as the process exits instead of
	// waiting for copying goroutines that a grandchild could block forever
	// (which is why cmd.WaitDelay is not needed here).
	pp, err := newPipes()
	if err != nil {
		res.Failure = FailureStartFailed
		res.Detail = "cannot create pipes: " + err.Error()
		return res
	}
	cmd := &exec.Cmd{
		Path:   path,
		Args:   s.Command,
		Dir:    s.Dir,
		Env:    env,
		Stdin:  pp.stdinR,
		Stdout: pp.stdoutW,
		Stderr: pp.stderrW,
	}
	setProcessGroup(cmd)
	fenceW := -1
	if s.Sandbox != nil {
		if s.Fence != nil {
			r, w, err := fencePipe()
			if err != nil {
				pp.closeChildEnds()
				pp.closeParentEnds()
				res.Failure = FailureStartFailed
				res.Detail = "cannot start the lease watchdog: " + err.Error()
				return res
			}
			cmd.ExtraFiles = []*os.File{r}
			fenceW = w
		}
		s.Sandbox.wrap(cmd, fenceW >= 0)
	} else if s.Fence != nil {
		// Unsandboxed, the tool itself gets the deadlines (fd 3,
		// SETT_LEASE_FD): a controller's launcher hands them to the
		// reaper that removes its worker when the lease lapses.
		if r, w, err := fencePipe(); err == nil {
			cmd.ExtraFiles = []*os.File{r}
			cmd.Env = append(cmd.Env, EnvLeaseFD+"=3")
			fenceW = w
		}
	}
	waited, err := startLocked(cmd)
	pp.closeChildEnds() // the child holds its own copies now
	if len(cmd.ExtraFiles) > 0 {
		_ = cmd.ExtraFiles[0].Close()
	}
	if fenceW >= 0 {
		if err != nil {
			closeFD(fenceW)
		} else {
			s.Fence.attach(fenceW)
			defer s.Fence.detach()
		}
	}
	if err != nil {
		pp.closeParentEnds()
		res.Failure = FailureStartFailed
		res.Detail = fmt.Sprintf("cannot start %s: %v", s.Command[0], err)
		return res
	}

	// A failed entry only weakens the cleanup after a crash of the cub
	// (Pdeathsig still covers the tool itself): the run goes on.
	_ = s.Ledger.add(cmd.Process.Pid, s.Command)
	defer s.Ledger.remove(cmd.Process.Pid)

	var timeoutC <-chan time.Time
	if s.Timeout > 0 {
		timer := time.NewTimer(s.Timeout)
		defer timer.Stop()
		timeoutC = timer.C
	}

	tooLarge := make(chan struct{})
	stdout := newStreamCapture(maxStdout, sync.OnceFunc(func() { close(tooLarge) }))
	stderr := newStreamCapture(maxStderr, nil)
	go stdout.drain(pp.stdoutR)
	go stderr.drain(pp.stderrR)
	stdinDone := make(chan struct{})
	go pp.feedStdin(s.Stdin, stdinDone)

	// The watcher kills the group for the first reason that comes up while
	// the process runs, and tells which reason it was ("" when the process
	// exited first).
	exited := make(chan struct{})
	killedFor := make(chan FailureKind, 1)
	go func() {
		var kind FailureKind
		select {
		case <-exited:
			killedFor <- ""
			return
		case <-ctx.Done():
			kind = FailureCanceled
		case <-timeoutC:
			kind = FailureTimeout
		case <-tooLarge:
			kind = FailureStdoutTooLarge
		}
		stopNow := kind == FailureCanceled && errors.Is(context.Cause(ctx), ErrStopNow)
		if kind != FailureStdoutTooLarge && s.StopGrace > 0 && !stopNow {
			// Ask first: a tool may want to clean up (a half-written file,
			// a child it started). The group gets SIGKILL when the grace
			// runs out.
			_ = signalProcessGroup(cmd.Process, syscall.SIGTERM)
			grace := time.NewTimer(s.StopGrace)
			select {
			case <-exited:
			case <-grace.C:
			}
			grace.Stop()
		}
		_ = killProcessGroup(cmd.Process) // nothing better to do if SIGKILL fails
		killedFor <- kind
	}()

	waitErr := <-waited
	close(exited)
	kind := <-killedFor

	// The leader is gone: kill what is left of its group, so that nothing
	// keeps writing into (or holding) the pipes, then read what is left in
	// them.
	_ = killProcessGroup(cmd.Process)
	pp.drainAndClose(stdout.done, stderr.done, stdinDone)

	res.Stdout = stdout.data
	res.Stderr = stderr.data
	res.StdoutTail = stdout.tail.bytes()
	res.StderrTail = stderr.tail.bytes()
	res.StdoutBytes = stdout.total
	res.StderrBytes = stderr.total
	res.ExitCode = cmd.ProcessState.ExitCode()

	var exitErr *exec.ExitError
	switch {
	case kind == FailureTimeout:
		res.Failure = kind
		res.Detail = fmt.Sprintf("killed after timeout of %s", s.Timeout)
	case kind == FailureCanceled:
		res.Failure = kind
		res.Detail = "killed because the run was canceled: " + context.Cause(ctx).Error()
	case kind == FailureStdoutTooLarge || stdout.exceeded:
		// The cap may also be crossed by what the pipe still held after a
		// normal exit, so the capture itself is checked too.
		res.Failure = FailureStdoutTooLarge
		res.Detail = fmt.Sprintf("stdout exceeded %d bytes", maxStdout)
	case errors.As(waitErr, &exitErr):
		if sig, ok := exitSignal(exitErr.ProcessState); ok {
			res.Failure = FailureSignaled
			res.Detail = "terminated by " + sig
		} else if why, ok := sandboxStartFailure(s.Sandbox, res.ExitCode, res.StderrTail); ok {
			// The helper, not the tool, exited: the tool never ran.
			res.Failure = FailureStartFailed
			res.Detail = why
		} else {
			res.Failure = FailureExitNonzero
			res.Detail = fmt.Sprintf("exit status %d", res.ExitCode)
		}
	case waitErr != nil:
		// Not an exit status: waiting itself failed. The process is gone
		// (its group was killed above), so report it as a failed run.
		res.Failure = FailureExitNonzero
		res.Detail = "waiting for the process failed: " + waitErr.Error()
	}
	return res
}

// pipes holds both ends of the child's stdin, stdout and stderr.
type pipes struct {
	stdinR, stdinW   *os.File
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File

	closeStdinW func() // closes stdinW once, from whichever goroutine is first
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	var opened []*os.File
	for _, pair := range []struct{ r, w **os.File }{
		{&p.stdinR, &p.stdinW}, {&p.stdoutR, &p.stdoutW}, {&p.stderrR, &p.stderrW},
	} {
		if *pair.r, *pair.w, err = os.Pipe(); err != nil {
			for _, f := range opened {
				_ = f.Close()
			}
			return nil, err
		}
		opened = append(opened, *pair.r, *pair.w)
	}
	p.closeStdinW = sync.OnceFunc(func() { _ = p.stdinW.Close() })
	return &p, nil
}

// closeChildEnds closes the ends that only the child must hold, so that
// EOF on stdout and stderr means every writer is gone.
func (p *pipes) closeChildEnds() {
	_ = p.stdinR.Close()
	_ = p.stdoutW.Close()
	_ = p.stderrW.Close()
}

func (p *pipes) closeParentEnds() {
	p.closeStdinW()
	_ = p.stdoutR.Close()
	_ = p.stderrR.Close()
}

// feedStdin writes data to the child's stdin and closes it. Write errors
// (EPIPE when the tool exits without reading) only mean the tool did not
// want its input.
func (p *pipes) feedStdin(data []byte, done chan<- struct{}) {
	defer close(done)
	if len(data) > 0 {
		_, _ = p.stdinW.Write(data)
	}
	p.closeStdinW()
}

// drainAndClose waits up to drainTimeout for both readers to reach EOF, then
// closes the parent's ends, which also unblocks a reader still waiting on a
// descendant that escaped the process group, and a stdin writer blocked on a
// descendant that never reads. It returns when no goroutine of the run is
// left.
func (p *pipes) drainAndClose(stdoutDone, stderrDone, stdinDone <-chan struct{}) {
	bothDone := make(chan struct{})
	go func() {
		<-stdoutDone
		<-stderrDone
		close(bothDone)
	}()
	deadline := time.NewTimer(drainTimeout)
	defer deadline.Stop()
	select {
	case <-bothDone:
	case <-deadline.C:
	}
	p.closeParentEnds()
	<-bothDone
	<-stdinDone
}

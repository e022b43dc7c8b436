package daemonproc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/tiedchild"
)

// killWait bounds how long Kill waits for the process after its SIGKILL
// before it kills the whole process group as well.
const killWait = 10 * time.Second

// Spec is what a Process runs.
type Spec struct {
	// Name names the process in errors and its log file (Name.log).
	Name string
	// Argv is the program and its arguments; each start inserts
	// --http-addr and the process's address right after the program.
	Argv []string
	// Env is the whole environment of the process (nil: none).
	Env []string
	// Dir is the working directory; it holds the log.
	Dir string
}

// Process is a daemon started from a Spec, which can be stopped, killed
// and started again with the same arguments and address. Build one with
// New or Start; the zero value is not usable. Safe for concurrent use.
type Process struct {
	// Name is the Spec's name.
	Name string
	// HTTPAddr (host:port) is where the daemon serves /healthz, /readyz
	// and /metrics: a free loopback port chosen by New, kept across
	// restarts.
	HTTPAddr string
	// LogPath is the file the daemon's stdout and stderr are appended to,
	// across restarts.
	LogPath string

	mu   sync.Mutex
	spec Spec
	cmd  *exec.Cmd
	// exited is closed when the current run's process has been waited for.
	exited chan struct{}
	// ending is set when the harness asked the current run to end (Stop,
	// Kill, KillGroup); an exit without it is unexpected.
	ending     bool
	unexpected int
}

// New prepares a process on a free port without starting it.
func New(spec Spec) (*Process, error) {
	if len(spec.Argv) == 0 {
		return nil, fmt.Errorf("daemonproc: %s: no program to run", spec.Name)
	}
	port, err := redistest.FreePort()
	if err != nil {
		return nil, fmt.Errorf("daemonproc: %w", err)
	}
	spec.Argv = append([]string(nil), spec.Argv...)
	return &Process{Name: spec.Name, HTTPAddr: "127.0.0.1:" + strconv.Itoa(port),
		LogPath: filepath.Join(spec.Dir, spec.Name+".log"), spec: spec}, nil
}

// Start prepares a process (New) and starts it. It does not wait until
// the process is ready (WaitReady).
func Start(spec Spec) (*Process, error) {
	p, err := New(spec)
	if err != nil {
		return nil, err
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

// Spec returns what the process runs (a copy: changing it does not change
// the process). Start a new process from it to get a fresh address.
func (p *Process) Spec() Spec {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.spec
	s.Argv = append([]string(nil), s.Argv...)
	s.Env = append([]string(nil), s.Env...)
	return s
}

// SetEnv replaces the environment the next Start uses.
func (p *Process) SetEnv(env []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spec.Env = append([]string(nil), env...)
}

// Start (re)starts the process with its arguments, environment and
// address, tied to this process (it is killed when the harness exits) and
// in a process group of its own. It returns an error when the process is
// still running.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runningLocked() {
		return fmt.Errorf("daemonproc: %s is already running", p.Name)
	}
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("daemonproc: %w", err)
	}
	args := append([]string{"--http-addr", p.HTTPAddr}, p.spec.Argv[1:]...)
	cmd := exec.Command(p.spec.Argv[0], args...)
	cmd.Env, cmd.Dir = p.spec.Env, p.spec.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// Tied, not started the plain way: the harnesses end threads (tool
	// runs, redistest's restarts), and a child with a parent-death signal
	// forked on one of them would die with it, an exit nothing caused.
	waited, err := tiedchild.Start(cmd)
	if err != nil {
		logf.Close()
		return fmt.Errorf("daemonproc: start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.ending = cmd, exited, false
	go func() {
		<-waited
		logf.Close()
		p.mu.Lock()
		if !p.ending {
			p.unexpected++
		}
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

func (p *Process) runningLocked() bool {
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Running reports whether the process was started and has not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runningLocked()
}

// Pid is the process id of the current (or last) run, or 0 before the
// first Start.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Exited returns a channel closed when the current run has exited (nil,
// which never closes, before the first Start).
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// ExitCode is the exit code of the last run once it has exited, or -1
// (still running, never started, or ended by a signal).
func (p *Process) ExitCode() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.runningLocked() || p.cmd == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// UnexpectedExits counts the runs that ended without Stop, Kill or
// KillGroup asking them to.
func (p *Process) UnexpectedExits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unexpected
}

// Signal sends sig to the process alone without waiting for anything
// (SIGSTOP and SIGCONT freeze and thaw it). It returns an error when the
// process was never started or has exited.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("daemonproc: %s was never started", p.Name)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("daemonproc: signal %s: %w", p.Name, err)
	}
	return nil
}

// Stop sends SIGTERM and waits up to grace for the exit, then kills the
// process group and waits for that. It returns at once when the process
// is not running.
func (p *Process) Stop(grace time.Duration) { p.end(syscall.SIGTERM, grace) }

// Kill sends SIGKILL to the process alone, as a crash of the daemon
// (children of its own group, its tools, are left to their parent-death
// signal), and waits for the exit; should the exit not come within 10s it
// kills the group too. It returns at once when the process is not running.
func (p *Process) Kill() { p.end(syscall.SIGKILL, killWait) }

// end signals the running process and waits up to grace for its exit,
// then kills its group.
func (p *Process) end(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	running := p.runningLocked()
	if running {
		p.ending = true
	}
	p.mu.Unlock()
	if !running {
		return
	}
	_ = cmd.Process.Signal(sig)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

// KillGroup sends SIGKILL to the process's whole group (the daemon and
// every child that stayed in it) and waits for the daemon's exit. Unlike
// Kill it signals the group even when the daemon has already exited, so
// that nothing it left behind survives. A no-op before the first Start.
func (p *Process) KillGroup() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	if cmd != nil {
		p.ending = true
	}
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// LogTail returns up to the last n bytes of the log ("...\n" first when
// cut), or what went wrong reading it.
func (p *Process) LogTail(n int) string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return err.Error()
	}
	if len(b) > n {
		return "...\n" + string(b[len(b)-n:])
	}
	return string(b)
}

// exitState describes how the last run ended, for errors.
func (p *Process) exitState() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.ProcessState == nil {
		return "not started"
	}
	return p.cmd.ProcessState.String()
}

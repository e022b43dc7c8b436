package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// setNamespaces asks for a new mount and pid namespace for the child. A
// process without root also asks for a user namespace that maps only its
// own uid and gid, where the helper holds CAP_SYS_ADMIN (as an ambient
// capability, which survives its exec) for the mounts; it drops it before
// the tool starts, so the tool runs as the same unprivileged user.
func setNamespaces(a *syscall.SysProcAttr) {
	a.Cloneflags |= syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
	if uid := os.Geteuid(); uid != 0 {
		gid := os.Getegid()
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
}

// needsRelay reports whether the helper must create the namespaces itself
// (through a second copy): without root, the parent writes the child's
// uid_map in /proc, which is root-owned while the parent — the cub, made
// non-dumpable to protect its secrets — passes the flag on to the child
// until it execs. The helper, freshly exec'd, is dumpable.
func needsRelay() bool { return os.Geteuid() != 0 }

// ProbeSandbox reports whether helper can set up a sandbox here (nil) or
// why not: it runs the helper with an empty request, which sets up the
// namespaces and mounts and exits.
func ProbeSandbox(ctx context.Context, helper string, hide []string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	relay := needsRelay()
	req, _ := json.Marshal(sandboxRequest{Hide: hide, Relay: relay})
	cmd := exec.CommandContext(ctx, helper, SandboxArg, string(req))
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if !relay {
		setNamespaces(cmd.SysProcAttr)
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := RunTracked(cmd) // a cub that is PID 1 reaps only what it did not start
	out := buf.Bytes()
	if err != nil {
		if len(out) > 0 {
			return fmt.Errorf("%v: %s", err, out)
		}
		return err
	}
	return nil
}

// SandboxMain is the body of the sandbox helper (`<cub> __sett-sandbox
// REQUEST`), already inside its new namespaces. It returns the exit code:
// the tool's, 128+n when the tool died of signal n, or 125 when the
// sandbox could not be set up (with the reason on stderr).
func SandboxMain(args []string) int {
	// The tool gets a parent-death signal: keep the thread that starts it.
	goruntime.LockOSThread()
	fail := func(err error) int {
		fmt.Fprint(os.Stderr, sandboxFailPrefix, err, "\n")
		return sandboxFailExit
	}
	if len(args) != 1 {
		return fail(errors.New("want one argument, the request"))
	}
	var req sandboxRequest
	if err := json.Unmarshal([]byte(args[0]), &req); err != nil {
		return fail(fmt.Errorf("bad request: %w", err))
	}
	if req.Relay {
		return relay(req, fail)
	}
	if err := setupMounts(req); err != nil {
		return fail(err)
	}
	// The mounts are done: nothing the tool runs may keep CAP_SYS_ADMIN
	// (without root it was an ambient capability of the user namespace).
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fail(fmt.Errorf("drop ambient capabilities: %w", err))
	}
	if os.Geteuid() != 0 {
		if err := clearCapabilities(); err != nil {
			return fail(err)
		}
	}
	// The working directory still refers to the mount it was on before
	// setupMounts: enter it again by name, so that a read-only bind over
	// it applies to the tool too.
	if wd, err := os.Getwd(); err == nil {
		if err := os.Chdir(wd); err != nil {
			return fail(fmt.Errorf("re-enter %s: %w", wd, err))
		}
	}
	if req.Path == "" {
		return 0 // a probe
	}
	// The helper is the namespace's init: a SIGTERM to the process group
	// reaches the tool directly; the helper only has to outlive it. The
	// signals are caught, not ignored: an ignored signal would stay ignored
	// in the tool across exec, and the tool could not be asked to stop.
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for range sigc {
		}
	}()
	cmd := &exec.Cmd{Path: req.Path, Args: req.Args, Env: os.Environ(),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	// Pdeathsig on the tool too: the helper is its parent.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("cannot start %s: %w", req.Path, err))
	}
	// Reap everything (orphans are re-parented to this process) until the
	// tool itself exits.
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("wait: %w", err))
		}
		if pid != cmd.Process.Pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// relay starts the helper again, in the new namespaces, and waits for it:
// the first copy only forwards its exit status. Both copies stay in the
// tool's process group, and each has a parent-death signal, so killing the
// group, or the cub, still ends everything.
func relay(req sandboxRequest, fail func(error) int) int {
	exe, err := os.Executable()
	if err != nil {
		return fail(fmt.Errorf("find the helper: %w", err))
	}
	req.Relay = false
	b, _ := json.Marshal(req)
	cmd := &exec.Cmd{Path: exe, Args: []string{exe, SandboxArg, string(b)}, Env: os.Environ(),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}}
	setNamespaces(cmd.SysProcAttr)
	// A SIGTERM to the group reaches the tool; this copy waits for it.
	sigc := make(chan os.Signal, 4)
	signal.Notify(sigc, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for range sigc {
		}
	}()
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("enter the namespaces: %w", err))
	}
	err = cmd.Wait()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exitErr.ExitCode()
	}
	return fail(err)
}

// clearCapabilities empties every capability set of this process (an
// unprivileged helper's CAP_SYS_ADMIN in its user namespace), so the tool
// starts with none.
func clearCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// setupMounts makes the mount namespace private, hides and protects what
// the request names, and mounts a /proc of the new pid namespace.
func setupMounts(req sandboxRequest) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	for _, dir := range req.ReadOnly {
		if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", dir, err)
		}
		if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return fmt.Errorf("make %s read-only: %w", dir, err)
		}
	}
	for _, dir := range req.Hide {
		if _, err := os.Stat(dir); err != nil {
			continue // nothing to hide
		}
		if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0500"); err != nil {
			return fmt.Errorf("hide %s: %w", dir, err)
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

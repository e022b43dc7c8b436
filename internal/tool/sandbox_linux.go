package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// setNamespaces asks for a new mount, pid and IPC namespace for the child.
// A process without root also asks for a user namespace that maps only its
// own uid and gid, where the helper holds CAP_SYS_ADMIN (for the mounts)
// and CAP_SETPCAP (to empty its bounding set) as ambient capabilities,
// which survive its exec; it drops them before the tool starts, so the
// tool runs as the same unprivileged user without any.
func setNamespaces(a *syscall.SysProcAttr) {
	a.Cloneflags |= syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	if uid := os.Geteuid(); uid != 0 {
		gid := os.Getegid()
		a.Cloneflags |= syscall.CLONE_NEWUSER
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		a.GidMappingsEnableSetgroups = false
		a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
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
// namespaces and mounts and exits. See Sandbox.Probe, which also tries the
// workspace.
func ProbeSandbox(ctx context.Context, helper string, hide []string) error {
	s := Sandbox{HelperPath: helper, Hide: hide}
	return s.Probe(ctx, "")
}

// Probe reports whether the sandbox s can be set up here for a tool whose
// working directory is workspace ("" for none) — nil — or why not: the
// helper builds the whole sandbox (namespaces, mounts, the workspace's
// idmapped mount as root, dropped privileges) and exits without running
// anything.
func (s *Sandbox) Probe(ctx context.Context, workspace string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	relay := needsRelay()
	req, _ := json.Marshal(sandboxRequest{Hide: s.Hide, ReadOnly: s.ReadOnly, Relay: relay, Workspace: workspace, ToolUID: s.toolUID()})
	cmd := exec.CommandContext(ctx, s.HelperPath, SandboxArg, string(req))
	cmd.Env = []string{}
	cmd.Dir = workspace
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if !relay {
		setNamespaces(cmd.SysProcAttr)
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := RunTracked(cmd) // a cub that is PID 1 reaps only what it did not start
	out := bytes.TrimSpace(buf.Bytes())
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
// the tool's, 128+n when the tool died of signal n, 137 when the watchdog
// killed it, or 125 when the sandbox could not be set up (with the reason
// on stderr).
func SandboxMain(args []string) int {
	// The tool gets a parent-death signal and inherits this thread's
	// bounding set and no_new_privs: keep the thread that starts it.
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
	if req.Park {
		_, _ = bufio.NewReader(os.Stdin).ReadString(0)
		return 0
	}
	if req.Watch {
		// The deadline pipe is the helper's alone: the tool must not
		// inherit it (a relay passes it on explicitly).
		unix.CloseOnExec(watchFD)
	}
	if req.Relay {
		return relay(req, fail)
	}
	root := os.Geteuid() == 0
	if req.ToolUID <= 0 {
		req.ToolUID = DefaultToolUID
	}
	if err := setupMounts(req, root); err != nil {
		return fail(err)
	}
	if err := dropPrivileges(root); err != nil {
		return fail(err)
	}
	// The working directory still refers to the mount it was on before
	// setupMounts: enter it again by name, so that the workspace's own
	// mount (read-only, or idmapped) applies to the tool too.
	if req.Workspace != "" {
		if err := os.Chdir(req.Workspace); err != nil {
			return fail(fmt.Errorf("re-enter %s: %w", req.Workspace, err))
		}
	} else if wd, err := os.Getwd(); err == nil {
		// Without a workspace the caller's directory is only where it
		// happened to be; under /tmp (private in the sandbox) or a hidden
		// path it is not there any more, and the tool starts in / instead.
		err := os.Chdir(wd)
		if errors.Is(err, fs.ErrNotExist) {
			err = os.Chdir("/")
		}
		if err != nil {
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
	if root {
		uid := uint32(req.ToolUID)
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}}
	}
	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("cannot start %s: %w", req.Path, err))
	}
	if req.Watch {
		go watchLease(os.NewFile(watchFD, "lease-deadline"))
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
// the first copy only forwards its exit status (and the lease deadline
// pipe). Both copies stay in the tool's process group, and each has a
// parent-death signal, so killing the group, or the cub, still ends
// everything.
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
	if req.Watch {
		cmd.ExtraFiles = []*os.File{os.NewFile(watchFD, "lease-deadline")}
	}
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
	if req.Watch {
		_ = cmd.ExtraFiles[0].Close() // the inner copy watches
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

// dropPrivileges leaves the helper (and so the tool it starts from this
// thread) with an empty bounding set, no_new_privs and — without root —
// no capability at all; a root helper keeps its own capabilities, and the
// tool loses them when it starts as ToolUID (a change of every uid away
// from 0 clears the permitted, effective and ambient sets). The helper
// becomes non-dumpable, so that the tool (which has no CAP_SYS_PTRACE)
// cannot ptrace it.
func dropPrivileges(root bool) error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("make the helper non-dumpable: %w", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("drop ambient capabilities: %w", err)
	}
	for c := 0; c < 64; c++ { // beyond CAP_LAST_CAP: capabilities of a newer kernel
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("empty the capability bounding set (capability %d): %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if !root {
		return clearCapabilities()
	}
	return nil
}

// clearCapabilities empties the effective, permitted and inheritable
// capability sets of this thread (an unprivileged helper's CAP_SYS_ADMIN
// in its user namespace), so the tool starts with none.
func clearCapabilities() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// setupMounts makes the mount namespace private, builds the read-only view
// of the host for a root helper, hides and protects what the request
// names, and mounts a read-only /proc of the new pid namespace.
func setupMounts(req sandboxRequest, root bool) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	// The new /proc first: the idmapped workspace needs a user namespace
	// whose uid_map is written through /proc/<pid>, with this namespace's
	// pids.
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	readOnly := req.ReadOnly
	if root {
		if err := readOnlyView(req); err != nil {
			return err
		}
		readOnly = without(readOnly, req.Workspace) // its mount is read-only already
	}
	for _, dir := range readOnly {
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
	// Read-only: as root in its namespace a tool could otherwise write
	// /proc/sys (sysctls check the owner, not a capability).
	if err := unix.Mount("", "/proc", "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("make /proc read-only: %w", err)
	}
	return nil
}

// privateTmp are the world-writable directories that get a private,
// writable tmpfs in the read-only view.
var privateTmp = []string{"/tmp", "/var/tmp", "/dev/shm"}

// readOnlyView turns every mount of the namespace read-only, mounts a
// private tmpfs on each of privateTmp, and mounts the workspace — taken
// before anything covered it, idmapped so that its owner's files belong to
// the tool's uid — back at its path. The tool's program directories (its
// command's, and its PATH's) that the private tmpfs would cover or that the
// tool's uid could not reach are mounted back the same way, read-only.
func readOnlyView(req sandboxRequest) error {
	type kept struct {
		dir string
		fd  int
	}
	var keep []kept
	defer func() {
		for _, k := range keep {
			unix.Close(k.fd)
		}
	}()
	if req.Workspace != "" {
		fd, err := idmappedTree(req.Workspace, req.ToolUID, slicesContains(req.ReadOnly, req.Workspace))
		if err != nil {
			return err
		}
		keep = append(keep, kept{req.Workspace, fd})
	}
	for _, dir := range programDirs(req) {
		if dir == req.Workspace || !needsKeeping(dir, req.ToolUID) {
			continue
		}
		fd, err := idmappedTree(dir, req.ToolUID, true)
		if err != nil {
			return err
		}
		keep = append(keep, kept{dir, fd})
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE,
		&unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make the host's mounts read-only in the sandbox: %w", err)
	}
	for _, dir := range privateTmp {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("private %s: %w", dir, err)
		}
	}
	dirs := make([]string, len(keep))
	for i, k := range keep {
		dirs[i] = k.dir
	}
	if err := reachable(dirs, req.ToolUID); err != nil {
		return err
	}
	for _, k := range keep {
		if err := unix.MoveMount(k.fd, "", unix.AT_FDCWD, k.dir, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("mount %s in the sandbox: %w", k.dir, err)
		}
	}
	return nil
}

// programDirs are the directories the tool's program may come from: its
// command's and its PATH's (absolute, existing ones).
func programDirs(req sandboxRequest) []string {
	var out []string
	if filepath.IsAbs(req.Path) {
		out = append(out, filepath.Dir(req.Path))
	}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(d) && !slicesContains(out, filepath.Clean(d)) {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				out = append(out, filepath.Clean(d))
			}
		}
	}
	return out
}

// needsKeeping reports whether dir would be lost to the tool: under a
// private tmpfs, or not reachable by uid.
func needsKeeping(dir string, uid int) bool {
	for _, t := range privateTmp {
		if dir == t || strings.HasPrefix(dir, t+"/") {
			return true
		}
	}
	p := "/"
	for _, part := range strings.Split(strings.Trim(dir, "/"), "/") {
		p = filepath.Join(p, part)
		st, err := os.Stat(p)
		if err != nil {
			return false
		}
		if !searchable(st, uid) {
			return true
		}
	}
	return false
}

// idmappedTree returns a detached copy of dir's mount (the workspace, or a
// program directory) in which the uid and gid that own dir are uid (the
// tool's), and that is read-only when ro is set; nosuid and nodev either
// way.
func idmappedTree(dir string, uid int, ro bool) (int, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return -1, fmt.Errorf("sandbox: %w", err)
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("take %s into the sandbox: %w", dir, err)
	}
	ns, err := idmapUserns(int(st.Uid), int(st.Gid), uid)
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	defer unix.Close(ns)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV, Userns_fd: uint64(ns)}
	if ro {
		attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
	}
	if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("idmap %s to uid %d (the file system must support idmapped mounts, Linux 5.12+): %w", dir, uid, err)
	}
	return fd, nil
}

// idmapUserns returns a user namespace (an open /proc/<pid>/ns/user) that
// maps ownerUID to uid and ownerGID to uid: held open by a parked copy of
// the helper, which exits as soon as the namespace is open.
func idmapUserns(ownerUID, ownerGID, uid int) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return -1, fmt.Errorf("find the helper: %w", err)
	}
	park, _ := json.Marshal(sandboxRequest{Park: true})
	cmd := exec.Command(exe, SandboxArg, string(park))
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: ownerUID, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: ownerGID, HostID: uid, Size: 1}},
		GidMappingsEnableSetgroups: false, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return -1, err
	}
	if err := cmd.Start(); err != nil {
		return -1, fmt.Errorf("create the workspace's user namespace: %w", err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	ns, err := unix.Open("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/ns/user", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the workspace's user namespace: %w", err)
	}
	return ns, nil
}

// reachable makes every directory from / down to each of dirs traversable
// by uid: the first ancestor that is not (such as /root, mode 0700) is
// covered by an empty tmpfs holding only the paths down to dirs, which
// hides nothing the tool could have reached anyway, and is then made
// read-only. Each of dirs is created where it is missing (under a private
// /tmp), as a mount point.
func reachable(dirs []string, uid int) error {
	var covers []string
	for _, dir := range dirs {
		parts := strings.Split(strings.Trim(filepath.Clean(dir), "/"), "/")
		p := "/"
		for _, part := range parts[:len(parts)-1] {
			p = filepath.Join(p, part)
			st, err := os.Stat(p)
			if err != nil {
				break // under a private tmpfs: created below
			}
			if searchable(st, uid) {
				continue
			}
			if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
				return fmt.Errorf("make %s traversable to %s: %w", p, dir, err)
			}
			covers = append(covers, p)
			break
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("the path to %s in the sandbox: %w", dir, err)
		}
	}
	for _, p := range covers {
		if err := unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	return nil
}

// searchable reports whether uid (with gid uid, no other groups) may
// traverse the directory st.
func searchable(st os.FileInfo, uid int) bool {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	mode := uint32(st.Mode().Perm())
	switch {
	case int(sys.Uid) == uid:
		return mode&0o100 != 0
	case int(sys.Gid) == uid:
		return mode&0o010 != 0
	}
	return mode&0o001 != 0
}

func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fencePipe returns a pipe for a Fence: the read end for the helper (fd 3),
// and a non-blocking write end for the cub.
func fencePipe() (*os.File, int, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, -1, fmt.Errorf("lease deadline pipe: %w", err)
	}
	if err := unix.SetNonblock(p[1], true); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return nil, -1, fmt.Errorf("lease deadline pipe: %w", err)
	}
	return os.NewFile(uintptr(p[0]), "lease-deadline"), p[1], nil
}

func closeFD(fd int) { _ = unix.Close(fd) }

// monotonicNow reads CLOCK_MONOTONIC, the clock that the cub and the
// helper share.
func monotonicNow() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Duration(ts.Nano())
}

// writeDeadline sends deadline on the pipe w as nanoseconds of
// CLOCK_MONOTONIC.
func writeDeadline(w int, deadline time.Time) {
	at := monotonicNow() + time.Until(deadline)
	_, _ = unix.Write(w, []byte(strconv.FormatInt(int64(at), 10)+"\n"))
}

// watchLease is the helper's lease watchdog: it reads deadlines (see
// writeDeadline) from f and, when the last one passes, kills every process
// of the namespace and exits. EOF — the cub closed the pipe, or died —
// keeps the last deadline: nobody is left to extend it.
func watchLease(f *os.File) {
	deadlines := make(chan time.Duration)
	go func() {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if at, err := strconv.ParseInt(sc.Text(), 10, 64); err == nil {
				deadlines <- time.Duration(at)
			}
		}
		close(deadlines)
	}()
	var timer *time.Timer
	var expired <-chan time.Time
	for {
		select {
		case at, ok := <-deadlines:
			if !ok {
				deadlines = nil
				continue
			}
			if timer != nil {
				timer.Stop()
			}
			timer = time.NewTimer(at - monotonicNow())
			expired = timer.C
		case <-expired:
			fmt.Fprintln(os.Stderr, "sett sandbox: the tool's lease lapsed without renewal (its cub is gone, stopped or cut off): killing the tool")
			// As the namespace's init, kill(-1) reaches every other
			// process of it; exiting would too, a moment later.
			_ = syscall.Kill(-1, syscall.SIGKILL)
			os.Exit(137)
		}
	}
}

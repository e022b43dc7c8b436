//go:build linux

package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/settdev/sett/internal/eventually"
)

// runnerHelperEnv makes the test binary run one tool (a JSON Spec in the
// variable) with a ledger and block: a stand-in for a cub that a test
// kills with SIGKILL.
const runnerHelperEnv = "SETT_TOOL_RUNNER_HELPER"

func runnerHelper() int {
	var s Spec
	if err := json.Unmarshal([]byte(os.Getenv(runnerHelperEnv)), &s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r := Run(context.Background(), s)
	fmt.Fprintln(os.Stderr, "tool ended:", r.Detail)
	return 0
}

// alive reports whether pid runs (zombies count as gone).
func alive(pid int) bool {
	st, ok := readStat(pid)
	return ok && st.state != 'Z'
}

// waitFor polls cond against one deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventually.True(t, 20*time.Second, what, cond)
}

// startKilledRunner starts a runner (the test binary) running script as
// the tool with a ledger, waits until the tool wrote the pid of its
// background child, kills the runner with SIGKILL and returns the ledger
// and the pids of the tool (its group leader) and of the background child.
func startKilledRunner(t *testing.T, script string) (l *Ledger, leader, child int) {
	t.Helper()
	dir := t.TempDir()
	l = &Ledger{Dir: filepath.Join(dir, "run")}
	pidFile := filepath.Join(dir, "child.pid")
	spec, _ := json.Marshal(Spec{Command: []string{"/bin/sh", "-c", script}, Dir: dir,
		Env: []string{"PATH=/usr/bin:/bin", "PIDFILE=" + pidFile}, Ledger: l})
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), runnerHelperEnv+"="+string(spec))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tool's child pid", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return child > 0
	})
	entries, err := os.ReadDir(l.Dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("ledger %s: %v %v, want one entry while the tool runs", l.Dir, entries, err)
	}
	leader, _ = strconv.Atoi(strings.TrimSuffix(entries[0].Name(), ".json"))
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	t.Cleanup(func() { _ = syscall.Kill(-leader, syscall.SIGKILL); _ = syscall.Kill(child, syscall.SIGKILL) })
	return l, leader, child
}

// A tool never outlives the process that runs it: killed with SIGKILL, the
// runner cannot stop it, but the parent-death signal does. The tool's own
// background child (no parent-death signal of its own) is left, and the
// ledger lets the next runner kill it before it starts anything.
func TestToolDiesWithItsRunnerAndTheLedgerKillsTheRest(t *testing.T) {
	l, leader, child := startKilledRunner(t, `sleep 300 & echo $! > "$PIDFILE"; wait`)
	waitFor(t, "the tool (group leader) to die with its runner", func() bool { return !alive(leader) })
	if !alive(child) {
		t.Fatalf("the tool's background child %d died too: the ledger check below would prove nothing", child)
	}
	n, err := l.KillLeftovers(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("KillLeftovers = %d, %v; want 1 group killed", n, err)
	}
	if alive(child) {
		t.Errorf("the tool's child %d outlived KillLeftovers", child)
	}
	if entries, _ := os.ReadDir(l.Dir); len(entries) != 0 {
		t.Errorf("ledger entries left: %v", entries)
	}
}

// A ledger entry whose pid now belongs to another process is not killed.
func TestLedgerLeavesAReusedPidAlone(t *testing.T) {
	dir := t.TempDir()
	l := &Ledger{Dir: dir}
	other := exec.Command("sleep", "300")
	other.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	pid := other.Process.Pid
	b, _ := json.Marshal(ledgerEntry{PGID: pid, StartTicks: 1, Command: []string{"old"}})
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(pid)+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := l.KillLeftovers(context.Background()); n != 0 || err != nil {
		t.Errorf("KillLeftovers = %d, %v; want the reused pid left alone", n, err)
	}
	if !alive(pid) {
		t.Errorf("KillLeftovers killed process %d, whose start time differs from the entry", pid)
	}
}

// The sandbox hides the state directory, makes a read-only workspace
// read-only, shows the tool only its own processes, and takes every
// process of the tool with it. It needs Linux namespaces (root or
// CAP_SYS_ADMIN); without them ProbeSandbox must say so.
func TestSandboxHidesProtectsAndContains(t *testing.T) {
	ctx := context.Background()
	if os.Geteuid() != 0 {
		if err := ProbeSandbox(ctx, os.Args[0], nil); err == nil {
			t.Fatal("ProbeSandbox succeeded without root: expected it to report that namespaces are unavailable")
		}
		return
	}
	if err := ProbeSandbox(ctx, os.Args[0], nil); err != nil {
		t.Fatalf("ProbeSandbox as root: %v", err)
	}
	secretDir, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(secretDir, "redis.password"), []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `cat "$SECRET"/redis.password 2>&1; ls "$SECRET" 2>&1
echo x > written 2>&1 || echo "write refused"
for p in /proc/[0-9]*; do tr '\0' ' ' < $p/environ 2>/dev/null; tr '\0' ' ' < $p/cmdline 2>/dev/null; ls $p/root$SECRET 2>/dev/null; echo; done
echo "procs: $(ls -d /proc/[0-9]* | wc -l)"`
	r := runBounded(t, ctx, Spec{Command: []string{"/bin/sh", "-c", script}, Dir: ws,
		Env:     []string{"PATH=/usr/bin:/bin", "SECRET=" + secretDir},
		Sandbox: &Sandbox{HelperPath: os.Args[0], Hide: []string{secretDir}, ReadOnly: []string{ws}}})
	out := string(r.Stdout) + string(r.Stderr)
	if r.Failure != "" {
		t.Fatalf("sandboxed run failed: %s: %s", r.Detail, out)
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("the tool read the hidden directory: %s", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "written")); err == nil || !strings.Contains(out, "write refused") {
		t.Errorf("the tool wrote into its read-only workspace (stat err %v): %s", err, out)
	}
	if strings.Contains(out, runnerHelperEnv) || strings.Contains(out, "-test.") {
		t.Errorf("the tool sees processes outside its sandbox: %s", out)
	}
	t.Logf("sandboxed tool output:\n%s", out)
}

// A tool's daemonised grandchild dies with the sandbox, not later.
func TestSandboxKillsWhatTheToolLeaves(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Log("needs root for namespaces; TestSandboxHidesProtectsAndContains checks that the probe says so")
		return
	}
	dir := t.TempDir()
	arg := strconv.Itoa(300000 + rand.IntN(1000000)) // names this test's sleep among the host's processes
	// setsid leaves the process group: only the namespace can catch it.
	r := runBounded(t, context.Background(), Spec{Command: []string{"/bin/sh", "-c",
		`setsid sleep ` + arg + ` </dev/null >/dev/null 2>&1 & echo ok`}, Dir: dir,
		Env:     []string{"PATH=/usr/bin:/bin"},
		Sandbox: &Sandbox{HelperPath: os.Args[0]}})
	if r.Failure != "" {
		t.Fatalf("run: %s %s", r.Detail, r.Stderr)
	}
	waitFor(t, "no 'sleep "+arg+"' of this sandbox left", func() bool { return len(sleepers(arg)) == 0 })
}

// sleepers lists the pids running `sleep arg` on this host.
func sleepers(arg string) []int {
	var out []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || !alive(pid) {
			continue
		}
		b, _ := os.ReadFile("/proc/" + p.Name() + "/cmdline")
		if string(b) == "sleep\x00"+arg+"\x00" {
			out = append(out, pid)
		}
	}
	return out
}

// unprivilegedEnv makes the test binary rerun one test as this uid.
const unprivilegedEnv = "SETT_TOOL_TEST_AS_UID"

// Without root the sandbox uses a user namespace: a tool of an ordinary
// user cannot read that user's own state directory, nor write its ro
// workspace. (Run as root, the test reruns itself as uid 65534.)
func TestSandboxWithoutRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		rerunAsNobody(t, "TestSandboxWithoutRoot")
		return
	}
	ctx := context.Background()
	// Like the cub, which hides its secrets this way.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := ProbeSandbox(ctx, os.Args[0], nil); err != nil {
		t.Fatalf("ProbeSandbox as uid %d: %v (unprivileged user namespaces disabled?)", os.Geteuid(), err)
	}
	secretDir, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(secretDir, "redis.password"), []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(secretDir, "redis.password")); err != nil || string(b) != "hunter2\n" {
		t.Fatalf("the user cannot read its own secret (%v): the test would prove nothing", err)
	}
	r := runBounded(t, ctx, Spec{Command: []string{"/bin/sh", "-c",
		`cat "$SECRET"/redis.password 2>&1; echo x > written 2>&1 || echo "write refused"; id -u; grep -E 'Cap|NoNewPrivs' /proc/self/status`},
		Dir: ws, Env: []string{"PATH=/usr/bin:/bin", "SECRET=" + secretDir},
		Sandbox: &Sandbox{HelperPath: os.Args[0], Hide: []string{secretDir}, ReadOnly: []string{ws}}})
	out := string(r.Stdout) + string(r.Stderr)
	if r.Failure != "" {
		t.Fatalf("sandboxed run failed: %s: %s", r.Detail, out)
	}
	if strings.Contains(out, "hunter2") || !strings.Contains(out, "write refused") {
		t.Errorf("the unprivileged sandbox leaked or let the tool write:\n%s", out)
	}
	for _, want := range []string{"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
		"CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000", "NoNewPrivs:\t1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the unprivileged tool's status lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "\n"+strconv.Itoa(os.Geteuid())+"\n") || !strings.Contains(out, "CapEff:\t0000000000000000") {
		t.Errorf("the tool does not run as uid %d without capabilities:\n%s", os.Geteuid(), out)
	}
	t.Logf("unprivileged sandbox:\n%s", out)
}

// A sandboxed tool can still be asked to stop: SIGTERM reaches it with its
// default action (the helper catches it rather than ignore it, which the
// tool would inherit).
func TestSandboxedToolStopsOnSIGTERM(t *testing.T) {
	if ProbeSandbox(context.Background(), os.Args[0], nil) != nil {
		t.Log("no namespaces here; TestSandboxHidesProtectsAndContains checks the probe")
		return
	}
	// The run is cancelled once the tool has set its trap (it says so
	// with a file), not after a fixed time: the sandbox takes longer to
	// build on a busy host.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		eventually.True(t, time.Minute, "the tool set its trap", func() bool {
			_, err := os.Stat(filepath.Join(dir, "ready"))
			return err == nil
		})
		cancel()
	}()
	r := runBounded(t, ctx, Spec{Command: []string{"/bin/sh", "-c", "trap 'echo got-term; exit 7' TERM; grep SigIgn /proc/self/status; : > ready; while :; do sleep 0.05; done"},
		Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, StopGrace: 20 * time.Second,
		Sandbox: &Sandbox{HelperPath: os.Args[0]}})
	if r.Failure != FailureCanceled || !strings.Contains(string(r.Stdout), "got-term") {
		t.Errorf("failure %q, stdout %q: want a cancellation that the tool saw as SIGTERM", r.Failure, r.Stdout)
	}
}

// A sandbox that cannot start the tool is a start failure with the
// helper's reason, while a sandboxed tool that exits 125 itself (docker
// run does) stays the tool's own exit.
func TestSandboxStartFailureIsNamed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Log("needs root for namespaces; TestSandboxStartFailureLine checks the parsing")
		return
	}
	ws := t.TempDir()
	r := runBounded(t, context.Background(), Spec{Command: []string{"/bin/sh", "-c", "echo '{}'"}, Dir: ws,
		Env:     []string{"PATH=/usr/bin:/bin"},
		Sandbox: &Sandbox{HelperPath: os.Args[0], ReadOnly: []string{filepath.Join(ws, "gone")}}})
	if r.Failure != FailureStartFailed || !strings.Contains(r.Detail, "the sandbox could not start the tool: bind ") {
		t.Fatalf("Run() failure = %q (%s), want start_failed with the helper's reason", r.Failure, r.Detail)
	}
	r = runBounded(t, context.Background(), Spec{Command: []string{"/bin/sh", "-c", "echo 'sett sandbox: no' >&2; echo later >&2; exit 125"},
		Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}, Sandbox: &Sandbox{HelperPath: os.Args[0]}})
	if r.Failure != FailureExitNonzero || r.ExitCode != 125 {
		t.Fatalf("Run() failure = %q (%s), exit %d; want the tool's own exit_nonzero 125", r.Failure, r.Detail, r.ExitCode)
	}
}

func TestSandboxStartFailureLine(t *testing.T) {
	sb := &Sandbox{}
	tests := []struct {
		name   string
		sb     *Sandbox
		code   int
		stderr string
		want   string
	}{
		{name: "the helper's reason", sb: sb, code: 125, stderr: "sett sandbox: cannot start x: permission denied\n",
			want: "the sandbox could not start the tool: cannot start x: permission denied"},
		{name: "the tool's own 125", sb: sb, code: 125, stderr: "docker: error\n"},
		{name: "the reason must end stderr", sb: sb, code: 125, stderr: "sett sandbox: x\nmore\n"},
		{name: "another exit code", sb: sb, code: 1, stderr: "sett sandbox: x\n"},
		{name: "no sandbox", code: 125, stderr: "sett sandbox: x\n"},
		{name: "empty stderr", sb: sb, code: 125},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sandboxStartFailure(tt.sb, tt.code, []byte(tt.stderr))
			if got != tt.want || ok != (tt.want != "") {
				t.Fatalf("sandboxStartFailure = %q, %v; want %q", got, ok, tt.want)
			}
		})
	}
}

// The sandbox's watchdog kills a tool whose fence passes, without anyone
// cancelling the run (the cub may be frozen), and a fence that moved
// keeps it alive past the first deadline. As root, the test also reruns
// itself as uid 65534, whose helper relays the deadline pipe into a user
// namespace.
func TestSandboxWatchdogKillsAtTheFence(t *testing.T) {
	if ProbeSandbox(context.Background(), os.Args[0], nil) != nil {
		t.Log("no namespaces here; TestSandboxHidesProtectsAndContains checks the probe")
		return
	}
	if os.Geteuid() == 0 {
		t.Run("as uid 65534", func(t *testing.T) { rerunAsNobody(t, "TestSandboxWatchdogKillsAtTheFence") })
	}
	fence := NewFence(time.Now().Add(300 * time.Millisecond))
	r := runBounded(t, context.Background(), Spec{Command: []string{"/bin/sh", "-c", "exec sleep 300"},
		Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"}, Sandbox: &Sandbox{HelperPath: os.Args[0]}, Fence: fence})
	if r.Failure != FailureExitNonzero || r.ExitCode != 137 || !strings.Contains(string(r.Stderr), "lease lapsed") {
		t.Errorf("failure %q (%s), exit %d, stderr %q: want the watchdog's kill (exit 137)", r.Failure, r.Detail, r.ExitCode, r.Stderr)
	}

	// Renewed like a lease (a deadline 1s ahead, every 100ms) for 3s, the
	// tool lives on; it finishes when told to.
	dir := t.TempDir()
	fence = NewFence(time.Now().Add(time.Hour))
	go func() {
		eventually.True(t, time.Minute, "the tool starts", func() bool {
			_, err := os.Stat(filepath.Join(dir, "ready"))
			return err == nil
		})
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end); <-tick.C {
			fence.Extend(time.Now().Add(time.Second))
		}
		fence.Extend(time.Now().Add(time.Hour))
		_ = os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	}()
	r = runBounded(t, context.Background(), Spec{Command: []string{"/bin/sh", "-c", ": > ready; while [ ! -e go ]; do sleep 0.05; done; echo done"},
		Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Sandbox: &Sandbox{HelperPath: os.Args[0]}, Fence: fence})
	if r.Failure != "" || !strings.Contains(string(r.Stdout), "done") {
		t.Errorf("failure %q (%s), stderr %q: the extended fence should have kept the tool alive", r.Failure, r.Detail, r.Stderr)
	}
}

// rerunAsNobody runs the test name of this binary again as uid 65534 (from
// a copy of the binary that uid can reach) and fails t unless it passes.
func rerunAsNobody(t *testing.T, name string) {
	t.Helper()
	// t.TempDir's parent is private to root: use a directory uid 65534
	// can reach.
	dir, err := os.MkdirTemp("", "sett-sandbox-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "tool.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^"+name+"$", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", unprivilegedEnv + "=65534", "TMPDIR=" + dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
	t.Logf("as uid 65534:\n%s", out)
}

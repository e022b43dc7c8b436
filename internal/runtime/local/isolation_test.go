package local_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/local"
	"github.com/settdev/sett/internal/stacktest"
)

// snoopScript is a tool that tries every ordinary way to the Redis
// password: the state home (instance records, the local state directory
// with redis.password, redis.conf, plan.json and the append-only file, the
// compose env file), the workspace's .sett, and every process's environ,
// command line and root directory in /proc. It also tries to write into
// its read-only workspace. It answers everything it read, base64-encoded.
const snoopScript = `cat >/dev/null
out=$( {
  echo "--- whoami: $(id)"
  echo "--- state home"; ls -laR "$STATE" 2>&1; find "$STATE" -type f -exec cat {} + 2>&1
  echo "--- workspace .sett"; ls -laR "$WS/.sett" 2>&1; find "$WS/.sett" -type f -exec cat {} + 2>&1
  echo "--- /proc"
  for p in /proc/[0-9]*; do
    echo "pid ${p#/proc/}: $(tr '\0' ' ' <$p/environ 2>&1) | $(tr '\0' ' ' <$p/cmdline 2>&1)"
    find "$p/root$STATE" -type f -exec cat {} + 2>/dev/null
  done
  echo "--- write"; echo x > "$WS/ro-probe" 2>&1 && echo "wrote the workspace"
} | base64 -w0 )
printf '{"artefact_type":"Snoop","artefact_payload":"%s","summary":"what the tool could read"}\n' "$out"
`

// Tools find no Redis password by any ordinary means, and a read-only
// workspace stays read-only: the local runtime runs tools in a sandbox
// (private mount and pid namespaces; TestSandboxWithoutRoot in
// internal/tool checks it for an ordinary user). The README states what a
// host without namespaces gets instead.
func TestToolsFindNoRedisPassword(t *testing.T) {
	integration(t)
	t.Parallel()
	rt := newRuntime(t)
	state := instance.StateHome()
	spec := newWorkspaceWith(t, func(ws string) string {
		return fmt.Sprintf(`version: "1.0"
orchestrator:
  bid_timeout: 2s
agents:
  snoop:
    command: ["sh", "-c", %q]
    consumes: ["GoalDefined"]
    environment:
      STATE: %q
      WS: %q
`, snoopScript, state, ws)
	})
	var warnings []string
	spec.WarnFunc = func(w string) { warnings = append(warnings, w) }
	rec := up(t, rt, spec)
	if len(warnings) != 0 {
		t.Errorf("Up warned %q; the sandbox is available on this host", warnings)
	}
	u, _ := url.Parse(rec.RedisURL)
	password, _ := u.User.Password()
	if len(password) < 16 {
		t.Fatalf("instance password %q: the test would prove nothing", password)
	}
	// The compose env file lives in the state home too.
	composeEnv := filepath.Join(state, "compose", "sett.env")
	if err := os.MkdirAll(filepath.Dir(composeEnv), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(composeEnv, []byte("SETT_REDIS_PASSWORD="+password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := instance.Save(rec); err != nil {
		t.Fatal(err)
	}
	// Preconditions: the password is where the tool will look.
	for _, p := range []string{filepath.Join(rec.StateDir, "redis.password"), instance.RecordPath(rec.Workspace, rec.Name), filepath.Join(rec.StateDir, "plan.json")} {
		if b, err := os.ReadFile(p); err != nil || !strings.Contains(string(b), password) {
			t.Fatalf("%s does not hold the password (%v): the test would prove nothing", p, err)
		}
	}
	if !strings.HasPrefix(rec.StateDir, state) || strings.HasPrefix(rec.StateDir, spec.Workspace) {
		t.Errorf("state directory %s is not in the state home %s", rec.StateDir, state)
	}

	checkSnoop(t, rec, password, spec.Workspace)
	// Outside the sandbox the cub's own /proc entries hold no password
	// either: it arrived on a pipe.
	cub := rec.Components["snoop"].PID
	for _, f := range []string{"environ", "cmdline"} {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(cub) + "/" + f)
		if err != nil {
			t.Fatalf("read the cub's %s: %v", f, err)
		}
		if strings.Contains(string(b), password) || strings.Contains(string(b), "SETT_REDIS_URL=") {
			t.Errorf("/proc/%d/%s holds the Redis URL", cub, f)
		}
	}
}

// checkSnoop runs the snoop tool of rec once and fails the test if it
// read the password, saw SETT_REDIS_URL or wrote its ro workspace.
func checkSnoop(t *testing.T, rec *instance.Record, password, workspace string) {
	t.Helper()
	bb := dial(t, rec)
	wf := postGoalAndWait(t, bb, "What can you read?")
	page, err := bb.ListArtefacts(context.Background(), blackboard.PageQuery{WorkflowID: wf, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	arts, err := bb.GetArtefacts(context.Background(), page.IDs)
	if err != nil {
		t.Fatal(err)
	}
	var seen string
	for _, a := range arts {
		if a.Type == "Snoop" {
			b, err := base64.StdEncoding.DecodeString(a.Payload)
			if err != nil {
				t.Fatal(err)
			}
			seen = string(b)
		}
	}
	if !strings.Contains(seen, "--- /proc") || !strings.Contains(seen, "pid 1:") {
		t.Fatalf("the snoop tool did not run as expected: %q", seen)
	}
	if strings.Contains(seen, password) {
		t.Errorf("the tool found the Redis password:\n%s", seen)
	}
	if strings.Contains(seen, "SETT_REDIS_URL") {
		t.Errorf("the tool saw SETT_REDIS_URL somewhere:\n%s", seen)
	}
	// The script's own text (in the /proc command lines) names the marker
	// too: look only at what follows the write section's header.
	if i := strings.LastIndex(seen, "\n--- write\n"); i < 0 || strings.Contains(seen[i:], "wrote the workspace") {
		t.Errorf("the tool wrote into its workspace of mode ro (or its output lacks the write section)")
	}
	if _, err := os.Stat(filepath.Join(workspace, "ro-probe")); err == nil {
		t.Errorf("ro-probe exists in the workspace")
	}
	t.Logf("what the tool read:\n%s", seen)
}

// newWorkspaceWith is newWorkspace for a configuration that names the
// workspace's own path.
func newWorkspaceWith(t *testing.T, yamlFor func(ws string) string) runtime.UpSpec {
	t.Helper()
	ws := t.TempDir()
	cfgPath := filepath.Join(ws, "sett.yml")
	if err := os.WriteFile(cfgPath, []byte(yamlFor(ws)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.UpSpec{Name: redistest.Instance(t), Workspace: ws, ConfigPath: cfgPath, Config: cfg}
}

// A tool never outlives its cub: killed with SIGKILL, the cub takes its
// tool with it, and the restarted cub runs the claim again — once.
func TestKilledCubTakesItsToolAndTheRestartRunsItOnce(t *testing.T) {
	integration(t)
	t.Parallel()
	rt := newRuntime(t)
	arg := strconv.Itoa(3000 + rand.IntN(100000)) // names this test's sleep among the host's processes
	spec := newWorkspace(t, fmt.Sprintf(`version: "1.0"
orchestrator:
  bid_timeout: 2s
  lease_ttl: 5s
agents:
  sleeper:
    command: ["sh", "-c", "cat >/dev/null; exec sleep %s"]
    consumes: ["GoalDefined"]
`, arg))
	rec := up(t, rt, spec)
	bb := dial(t, rec)
	g := blackboard.NewGoal("sleep", 0, "user", nil)
	if err := bb.CreateArtefact(context.Background(), g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	var first int
	eventually.True(t, 60*time.Second, "the tool runs", func() bool {
		s := sleepers(arg)
		if len(s) > 1 {
			t.Fatalf("%d copies of the tool run at once: %v", len(s), s)
		}
		if len(s) == 1 {
			first = s[0]
		}
		return first != 0
	})
	st, err := local.ReadStatus(local.StatusPath(rec.StateDir))
	if err != nil {
		t.Fatal(err)
	}
	cub := st.Components["sleeper"].PID
	if err := syscall.Kill(cub, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 30*time.Second, "the tool dies with its cub", func() bool { return !processRuns(first) })
	var second int
	eventually.True(t, 90*time.Second, "the restarted cub runs the claim again", func() bool {
		s := sleepers(arg)
		if len(s) > 1 {
			t.Fatalf("%d copies of the tool run at once: %v", len(s), s)
		}
		if len(s) == 1 && s[0] != first {
			second = s[0]
		}
		return second != 0
	})
	if err := rt.Down(context.Background(), rec, false); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, 30*time.Second, "no tool outlives sett down", func() bool { return len(sleepers(arg)) == 0 })
}

// sleepers lists the live processes running `sleep arg`.
func sleepers(arg string) []int {
	var out []int
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || !processRuns(pid) {
			continue
		}
		if b, _ := os.ReadFile("/proc/" + p.Name() + "/cmdline"); string(b) == "sleep\x00"+arg+"\x00" {
			out = append(out, pid)
		}
	}
	return out
}

// processRuns reports whether pid runs (a zombie does not).
func processRuns(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// The same as an ordinary user: `sett up --runtime local` run by uid
// 65534 (the test runs as root and drops to it) gives its tools a sandbox
// in a user namespace, so they find no password in that user's own state
// home either.
func TestToolsOfAnOrdinaryUserFindNoRedisPassword(t *testing.T) {
	integration(t)
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("this test starts the instance as uid 65534 and must run as root; TestToolsFindNoRedisPassword covers the current user")
	}
	bin := stacktest.BuildCLI(t)
	// The built binaries must be reachable by the other user (the umask
	// may have made them private).
	for _, p := range []string{filepath.Dir(bin.Sett), bin.Sett, bin.Cub, bin.Orchestrator} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	base, err := os.MkdirTemp("", "sett-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil { // MkdirTemp made it private
		t.Fatal(err)
	}
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	for _, d := range []string{ws, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(home, ".local", "state", "sett")
	name := redistest.Instance(t)
	yaml := fmt.Sprintf(`version: "1.0"
instance: %s
orchestrator:
  bid_timeout: 2s
agents:
  snoop:
    command: ["sh", "-c", %q]
    consumes: ["GoalDefined"]
    environment:
      STATE: %q
      WS: %q
`, name, snoopScript, state, ws)
	if err := os.WriteFile(filepath.Join(ws, "sett.yml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{ws, home, filepath.Join(ws, "sett.yml")} {
		if err := os.Chown(d, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	sett := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin.Sett, append([]string{"--no-color"}, args...)...)
		cmd.Dir = ws
		cmd.Env = []string{"HOME=" + home, "PATH=" + filepath.Dir(bin.Sett) + ":/usr/local/bin:/usr/bin:/bin", "NO_COLOR=1"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sett %s as uid 65534: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	out := sett("up", "--runtime", "local")
	t.Cleanup(func() { sett("down", "--purge") })
	if strings.Contains(out, "cannot isolate tools") {
		t.Errorf("sett up as an ordinary user warned that it cannot isolate tools (are unprivileged user namespaces disabled?):\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(state, "instances", instance.Key(ws, name)+".json"))
	if err != nil {
		t.Fatalf("the instance record is not in the user's state home: %v\n%s", err, out)
	}
	var rec instance.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(rec.RedisURL)
	password, _ := u.User.Password()
	if len(password) < 16 {
		t.Fatalf("password %q: the test would prove nothing", password)
	}
	checkSnoop(t, &rec, password, ws)
	if st, err := os.Stat(filepath.Join(ws, ".sett")); err == nil {
		t.Errorf("the workspace has a .sett (%v): state belongs in the state home", st.Mode())
	}
}

package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/instance"
)

// hostileReport is what testdata/hostile answers.
type hostileReport struct {
	Status   map[string]string `json:"status"`
	Attempts []struct {
		Name      string `json:"name"`
		Succeeded bool   `json:"succeeded"`
		Detail    string `json:"detail"`
	} `json:"attempts"`
	Passwords int `json:"passwords"`
}

// A tool of an instance that root started tries every attack of issue 35
// from inside its sandbox: it holds no capability in any set and has
// no_new_privs, runs as tool_uid, cannot write outside its workspace and
// its private /tmp, cannot unmount or remount anything, cannot ptrace or
// read the environment of the cub or of its sandbox's init, finds neither
// the state directory, the Redis password, the Unix socket nor the vault
// (inside the workspace), and cannot use the loopback Redis with anything
// it found. Its workspace stays usable: what it writes there is stored as
// the workspace's owner.
func TestHostileToolAsRoot(t *testing.T) {
	integration(t)
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("this test checks what a tool of a root-started instance can do and must run as root (CI does)")
	}
	rt := newRuntime(t)
	spec := newWorkspaceWith(t, func(ws string) string {
		return fmt.Sprintf(`version: "1.0"
orchestrator:
  bid_timeout: 2s
vault:
  path: vault
  rescan_interval: 1s
agents:
  hostile:
    command: [%q]
    consumes: ["GoalDefined"]
    workspace:
      mode: rw
`, filepath.Join(ws, "bin", "hostile"))
	})
	build := exec.Command("go", "build", "-o", filepath.Join(spec.Workspace, "bin", "hostile"), "./testdata/hostile")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the hostile tool: %v\n%s", err, out)
	}
	rec := up(t, rt, spec)
	if !strings.HasPrefix(rec.Isolation, "sandbox: tools run as uid 65532") {
		t.Errorf("the record says isolation %q", rec.Isolation)
	}
	u, _ := url.Parse(rec.RedisURL)
	password, _ := u.User.Password()
	vault := filepath.Join(spec.Workspace, "vault")
	targets := map[string]any{
		"cub_pid": rec.Components["hostile"].PID, "state_home": instance.StateHome(), "state_dir": rec.StateDir,
		"password_file": filepath.Join(rec.StateDir, "redis.password"), "socket": filepath.Join(rec.StateDir, "redis.sock"),
		"redis_addr": u.Host, "vault": vault,
	}
	// Preconditions: every target is there for the taking outside the
	// sandbox.
	if b, err := os.ReadFile(targets["password_file"].(string)); err != nil || !strings.Contains(string(b), password) || len(password) < 16 {
		t.Fatalf("the password file does not hold the password (%v): the test would prove nothing", err)
	}
	if st, err := os.Stat(targets["socket"].(string)); err != nil || st.Mode()&os.ModeSocket == 0 {
		t.Fatalf("no Redis socket at %s (%v): the test would prove nothing", targets["socket"], err)
	}
	eventually.True(t, 60*time.Second, "the orchestrator writes the vault", func() bool {
		_, err := os.Stat(filepath.Join(vault, "Needs_Action"))
		return err == nil
	})
	b, _ := json.Marshal(targets)
	if err := os.WriteFile(filepath.Join(spec.Workspace, "targets.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}

	bb := dial(t, rec)
	wf := postGoalAndWait(t, bb, "Break out.")
	rep := hostileArtefact(t, bb, wf)

	for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if v := rep.Status[set]; v != "0000000000000000" {
			t.Errorf("%s = %q, want every capability dropped", set, v)
		}
	}
	if rep.Status["NoNewPrivs"] != "1" {
		t.Errorf("NoNewPrivs = %q, want 1", rep.Status["NoNewPrivs"])
	}
	if f := strings.Fields(rep.Status["Uid"]); len(f) != 4 || f[0] != "65532" || f[1] != "65532" || f[2] != "65532" || f[3] != "65532" {
		t.Errorf("Uid = %q, want 65532 in every field", rep.Status["Uid"])
	}
	allowed := map[string]bool{"write the workspace": true, "write /tmp": true}
	var umounts, redisTries int
	seen := map[string]bool{}
	for _, a := range rep.Attempts {
		seen[a.Name] = true
		if strings.HasPrefix(a.Name, "umount ") {
			umounts++
		}
		if strings.HasPrefix(a.Name, "use Redis") {
			redisTries++
		}
		if a.Succeeded != allowed[a.Name] {
			t.Errorf("%s: succeeded=%v, want %v: %s", a.Name, a.Succeeded, allowed[a.Name], a.Detail)
		}
	}
	for _, name := range []string{"write /etc", "setuid 0", "remount / read-write", "ptrace the sandbox's pid 1", "ptrace the cub",
		"read /proc/<cub>/environ", "read /proc/1/environ", "read the Redis password file", "connect to the Redis unix socket",
		"use Redis on loopback without a password", "list the vault", "write into the vault", "write the workspace", "write /tmp"} {
		if !seen[name] {
			t.Errorf("the tool did not try %q", name)
		}
	}
	if umounts < 3 || redisTries < 1 {
		t.Errorf("the tool tried %d umounts and %d Redis logins: it did not run as expected", umounts, redisTries)
	}
	// On the host: nothing changed outside the workspace, and what the
	// tool wrote in it belongs to the workspace's owner.
	for _, p := range []string{"/etc/sett-hostile", "/usr/local/sett-hostile", filepath.Join(vault, "Needs_Action", "hostile.md"), filepath.Join(vault, "hostile.md")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the tool created %s", p)
			_ = os.Remove(p)
		}
	}
	st, err := os.Stat(filepath.Join(spec.Workspace, "hostile-was-here"))
	if err != nil {
		t.Fatalf("the tool could not write its workspace: %v", err)
	}
	wsSt, _ := os.Stat(spec.Workspace)
	if got, want := st.Sys().(*syscall.Stat_t).Uid, wsSt.Sys().(*syscall.Stat_t).Uid; got != want {
		t.Errorf("the tool's file is owned by uid %d, want the workspace owner %d", got, want)
	}
	t.Logf("status %v; %d attempts, %d candidate passwords found", rep.Status, len(rep.Attempts), rep.Passwords)
}

// hostileArtefact returns the report of workflow wf's Hostile artefact.
func hostileArtefact(t *testing.T, bb *blackboard.Client, wf string) hostileReport {
	t.Helper()
	page, err := bb.ListArtefacts(context.Background(), blackboard.PageQuery{WorkflowID: wf, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	arts, err := bb.GetArtefacts(context.Background(), page.IDs)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arts {
		if a != nil && a.Type == "Hostile" {
			var rep hostileReport
			if err := json.Unmarshal([]byte(a.Payload), &rep); err != nil {
				t.Fatalf("hostile report %q: %v", a.Payload, err)
			}
			return rep
		}
	}
	t.Fatalf("workflow %s has no Hostile artefact", wf)
	return hostileReport{}
}

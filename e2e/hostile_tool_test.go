package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// hostileReport is what the hostile tool
// (internal/runtime/local/testdata/hostile) answers.
type hostileReport struct {
	Status   map[string]string `json:"status"`
	Attempts []struct {
		Name      string `json:"name"`
		Succeeded bool   `json:"succeeded"`
		Detail    string `json:"detail"`
	} `json:"attempts"`
	Passwords int `json:"passwords"`
}

// The attacks of TestHostileToolAsRoot (internal/runtime/local), made by a
// tool inside an agent container that the Docker runtime started as it
// starts every agent: the tool holds no capability in any set and has
// no_new_privs, cannot write outside its workspace and /tmp (read-only
// root), cannot unmount, remount or ptrace, cannot read the cub's
// environment (/proc/1/environ: the cub is PID 1; it may only signal it,
// a known gap asserted below) nor the workspace's
// .sett, finds no Redis password anywhere and so cannot use the instance's
// Redis (which its container reaches: the cub needs it) with anything, and
// cannot see or write the vault, although the vault is inside the
// workspace it may write. The people's ACL user the record names posts the
// goal: the Redis container's users, selectors included, work.
func TestHostileToolInDockerAgent(t *testing.T) {
	t.Parallel()
	h := setup(t)
	s := newStack(t, h, `version: "1.0"
orchestrator:
  bid_timeout: 3s
vault:
  path: vault
agents:
  hostile:
    image: sett-cub:local
    consumes: ["GoalDefined"]
    command: ["/workspace/bin/hostile"]
    workspace:
      mode: rw
`)
	build := exec.Command("go", "build", "-o", filepath.Join(s.dir, "bin", "hostile"), "../internal/runtime/local/testdata/hostile")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the hostile tool: %v\n%s", err, out)
	}
	// The vault, inside the workspace the tool may write, with content
	// for the taking on the host side.
	vault := filepath.Join(s.dir, "vault")
	if err := os.MkdirAll(filepath.Join(vault, "Needs_Action"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vault, "Dashboard.md"), []byte("# Dashboard\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := s.mustUp()
	if rec.HumanRedisURL == "" || rec.ReaderRedisURL == "" {
		t.Fatalf("the record names no human or reader URL: %+v", rec)
	}
	redisName := rec.Components["redis"].Container
	targets := map[string]any{
		"cub_pid": 1, "state_home": "/workspace/.sett", "state_dir": "/workspace/.sett/instances",
		"password_file": "/workspace/.sett/redis.password", "socket": "/workspace/.sett/redis.sock",
		"redis_addr": redisName + ":6379", "vault": "/workspace/vault",
	}
	b, _ := json.Marshal(targets)
	if err := os.WriteFile(filepath.Join(s.dir, "targets.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	human, err := blackboard.Dial(context.Background(), rec.HumanRedisURL, blackboard.Options{Instance: s.name})
	if err != nil {
		t.Fatalf("dial as the human: %v", err)
	}
	defer human.Close()
	g := blackboard.NewGoal("Break out.", 0, "user", nil)
	if err := human.CreateArtefact(context.Background(), g, blackboard.WriteAuth{}); err != nil {
		t.Fatalf("post the goal as the human: %v", err)
	}
	if w := s.waitWorkflow(g.ID, 2*time.Minute); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s)", w.Status, w.Outcome)
	}
	var rep *hostileReport
	for _, a := range s.artefacts(g.ID) {
		if a.Type == "Hostile" {
			rep = &hostileReport{}
			if err := json.Unmarshal([]byte(a.Payload), rep); err != nil {
				t.Fatalf("report %q: %v", a.Payload, err)
			}
		}
	}
	if rep == nil {
		t.Fatal("no Hostile artefact")
	}

	for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if v := rep.Status[set]; v != "0000000000000000" {
			t.Errorf("%s = %q, want every capability dropped", set, v)
		}
	}
	if rep.Status["NoNewPrivs"] != "1" {
		t.Errorf("NoNewPrivs = %q, want 1", rep.Status["NoNewPrivs"])
	}
	if f := strings.Fields(rep.Status["Uid"]); len(f) != 4 || f[0] == "0" {
		t.Errorf("Uid = %q, want a non-root uid", rep.Status["Uid"])
	}
	// Known gap, asserted so that it stays visible: the tool shares its
	// cub's uid and pid namespace (the container drops every capability,
	// so the cub can neither switch the tool's uid nor unshare a pid
	// namespace), so kill(1, 0) succeeds. The kernel drops SIGKILL and
	// SIGSTOP sent to a namespace's init from inside it; SIGTERM would
	// stop the cub gracefully (its own agent only). docs/security.md.
	allowed := map[string]bool{"write the workspace": true, "write /tmp": true, "signal the cub": true}
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
	for _, name := range []string{"write /etc", "write /usr/local", "setuid 0", "remount / read-write", "ptrace the sandbox's pid 1",
		"ptrace the cub", "signal the cub", "read /proc/<cub>/environ", "read /proc/1/environ", "read the Redis password file",
		"use Redis on loopback without a password", "list the vault", "write into the vault", "create in the vault",
		"write the workspace", "write /tmp"} {
		if !seen[name] {
			t.Errorf("the tool did not try %q", name)
		}
	}
	if umounts < 3 || redisTries < 1 {
		t.Errorf("the tool tried %d umounts and %d Redis logins: it did not run as expected", umounts, redisTries)
	}
	for _, p := range []string{filepath.Join(vault, "Needs_Action", "hostile.md"), filepath.Join(vault, "hostile.md")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the tool created %s", p)
		}
	}
	if _, err := os.Stat(filepath.Join(s.dir, "hostile-was-here")); err != nil {
		t.Errorf("the tool could not write its workspace: %v", err)
	}
	t.Logf("status %v; %d attempts, %d candidate passwords found", rep.Status, len(rep.Attempts), rep.Passwords)
}

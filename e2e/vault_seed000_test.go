package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/docker"
	"github.com/settdev/sett/internal/stacktest"
)

// orchestratorFromThisTree builds the orchestrator of the tree under test
// onto sett-orchestrator:local (which may have been built from another
// tree) and returns a Docker runtime that runs it.
func orchestratorFromThisTree(t *testing.T, h *harness) *docker.Runtime {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "sett-orchestrator"), "../cmd/orchestrator")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build orchestrator: %v\n%s", err, out)
	}
	orch := "sett-e2e-orch-" + instanceName(t)[len("e2e-"):] + ":local"
	buildWith(t, h, orch, "FROM sett-orchestrator:local\nCOPY sett-orchestrator /usr/local/bin/\n", dir, "sett-orchestrator")
	rt, err := docker.New(docker.Options{ReadyTimeout: 90 * time.Second, OrchestratorImage: orch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

// Seed 000 on Docker, as a person runs it: `sett init --vault vault` in a
// Git workspace with no model configured (the bundled fake one, inside
// sett-agent-llm), the instance up with nothing edited, a task written
// into Needs_Action/ in place, its plan in Pending_Approval/, moved to
// Rejected/ with no reason, the learner's learning in Agent_Memory.md, a
// second task planned, and `sett forage` still accepted in the workspace.
// Run as root (as here), the vault `sett init` made is root's and the
// orchestrator runs as 65532: `sett up` gives the vault to 65532 and the
// vault stays healthy; run as a normal user, the vault stays theirs.
func TestVaultSeed000OnDocker(t *testing.T) {
	h := setup(t)
	ctx := context.Background()
	if _, err := h.cli.ImageInspect(ctx, "sett-agent-llm:local"); err != nil {
		t.Fatalf("image sett-agent-llm:local is missing: run `make llm-images`: %v", err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test: install it (Debian: apt-get install git)")
	}
	rt := orchestratorFromThisTree(t, h)
	bin := stacktest.BuildCLI(t)

	ws := t.TempDir()
	// The agents run as the workspace's owner, or 65532 when that is root:
	// they must be able to read it (`sett up` checks).
	if err := os.Chmod(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	name := instanceName(t)
	sett := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin.Sett, append([]string{"--no-color"}, args...)...)
		cmd.Dir = ws
		// No LLM_*, OPENAI_* or ANTHROPIC_*: init picks the bundled fake.
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "LLM_") && !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "ANTHROPIC_") {
				env = append(env, kv)
			}
		}
		cmd.Env = append(env, "NO_COLOR=1")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		t.Logf("$ sett %s\n%s", strings.Join(args, " "), out.String())
		if err != nil {
			t.Fatalf("sett %s: %v", strings.Join(args, " "), err)
		}
		return out.String()
	}
	if out := sett("init", "--vault", "vault"); !strings.Contains(out, "fake") {
		t.Errorf("init does not say it chose the bundled fake model:\n%s", out)
	}

	cfgPath := filepath.Join(ws, "sett.yml")
	cfg, _, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	spec := runtime.UpSpec{Name: name, Workspace: ws, ConfigPath: cfgPath, Config: cfg,
		ProgressFunc: func(p runtime.Progress) { t.Logf("up %s: %-12s %-8s %s", name, p.Component, p.State, p.Detail) },
		WarnFunc:     func(w string) { notes = append(notes, w); t.Logf("up %s: warning: %s", name, w) }}
	upCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	rec, err := rt.Up(upCtx, spec)
	cancel()
	if err != nil {
		t.Fatalf("up: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			s := &stack{t: t, h: &harness{cli: h.cli, rt: rt}, name: name}
			s.dumpLogs(context.Background())
		}
		if err := rt.Down(context.Background(), rec, true); err != nil {
			t.Errorf("down: %v", err)
		}
		_ = instance.Remove(ws, name)
	})
	rec.ConfigPath = cfgPath
	if err := instance.Save(rec); err != nil { // as `sett up` does: later commands find it
		t.Fatal(err)
	}

	vault := filepath.Join(ws, "vault")
	if st, err := os.Stat(vault); err != nil {
		t.Fatal(err)
	} else if uid := st.Sys().(*syscall.Stat_t).Uid; os.Geteuid() == 0 && uid != 65532 {
		t.Errorf("as root, the vault is owned by %d after up, want 65532 (the orchestrator's user); warnings: %q", uid, notes)
	} else if os.Geteuid() != 0 && int(uid) != os.Geteuid() {
		t.Errorf("the vault changed owner to %d", uid)
	}

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		eventually.True(t, 4*time.Minute, what, cond)
	}
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }
	pendingFile := func() string {
		m, _ := filepath.Glob(filepath.Join(vault, "Pending_Approval", "*.md"))
		if len(m) == 1 {
			return m[0]
		}
		return ""
	}

	task := "---\nsubject: Invoice 99\n---\nAnswer the client about invoice #99.\n"
	if err := os.WriteFile(filepath.Join(vault, "Needs_Action", "invoice.md"), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("the plan in Pending_Approval/", func() bool { return pendingFile() != "" })
	plan := pendingFile()
	if howto := read(plan); !strings.Contains(howto, "A reason is optional") {
		t.Errorf("the approval file asks for a reason the learner makes unnecessary:\n%s", howto)
	}
	if err := os.Rename(plan, filepath.Join(vault, "Rejected", filepath.Base(plan))); err != nil {
		t.Fatal(err)
	}
	want := `Rejected plan for "Invoice 99": Name the files a plan changes and how the change is verified`
	waitFor("the learning in Agent_Memory.md", func() bool { return strings.Contains(read(filepath.Join(vault, "Agent_Memory.md")), want) })
	waitFor("the reviewed rejection in Done/", func() bool {
		return strings.Contains(read(filepath.Join(vault, "Done", filepath.Base(plan))), "rejected_reviewed")
	})

	if err := os.WriteFile(filepath.Join(vault, "Needs_Action", "supplier.md"), []byte("Reply to the supplier.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("the second plan in Pending_Approval/", func() bool { return pendingFile() != "" })

	status := sett("status", "--name", name)
	if !strings.Contains(status, "in step") || strings.Contains(status, "FAILING") {
		t.Errorf("sett status does not show a healthy vault:\n%s", status)
	}
	st, err := exec.Command("git", "-C", ws, "status", "--porcelain").CombinedOutput()
	if err != nil || strings.Contains(string(st), "vault") {
		t.Errorf("git status shows the vault (%v):\n%s", err, st)
	}
	sett("forage", "--name", name, "--goal", "Add a /health endpoint")
}

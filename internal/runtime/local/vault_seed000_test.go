package local_test

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/fakellm"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/stacktest"
)

// TestVaultSeed000OutOfTheBox is seed 000 as a person runs it: `sett init
// --vault vault && sett up --runtime local` with nothing edited, a task
// written into Needs_Action/ (os.WriteFile, no rename), its plan in
// Pending_Approval/, moved to Rejected/ with no reason, the learner's
// learning in Agent_Memory.md, and the next task's planner prompt
// carrying it; `sett forage` keeps working in the same Git workspace.
// The model is the fake one, reached as a real provider would be: init
// chose it from LLM_PROVIDER and LLM_MODEL, and its address passes from
// the environment of `sett up` (OPENAI_BASE_URL).
func TestVaultSeed000OutOfTheBox(t *testing.T) {
	integration(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed for this test: install it (Debian: apt-get install git)")
	}
	b := stacktest.BuildCLI(t)
	llm := filepath.Join(b.Dir, "sett-agent-llm")
	if _, err := os.Stat(llm); err != nil {
		cmd := exec.Command("go", "build", "-o", llm, "../../../agents/llm")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build sett-agent-llm: %v\n%s", err, out)
		}
	}
	model := fakellm.New(fakellm.DemoScript())
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1") // the environment of `sett up`

	rt := newRuntime(t)
	ws := t.TempDir()
	if out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	runtimes := map[string]runtime.Runtime{"local": rt}
	env := map[string]string{"LLM_PROVIDER": "openai", "LLM_MODEL": "fake-gpt"}
	run := func(args ...string) string {
		t.Helper()
		out, errOut, err := cliRun(t, ws, runtimes, env, args...)
		if err != nil {
			t.Fatalf("sett %s: %v\n%s\n%s", strings.Join(args, " "), err, out, errOut)
		}
		return out
	}
	out := run("init", "--vault", "vault")
	if !strings.Contains(out, "openai model fake-gpt") {
		t.Errorf("init does not say which model it chose:\n%s", out)
	}
	spec := runtime.UpSpec{Name: stacktestName(t), Workspace: ws}
	cleanupInstance(t, rt, spec)
	run("up", "--runtime", "local", "--name", spec.Name)

	vault := filepath.Join(ws, "vault")
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		eventually.True(t, 3*time.Minute, what, cond)
	}
	pendingFile := func() string {
		m, _ := filepath.Glob(filepath.Join(vault, "Pending_Approval", "*.md"))
		if len(m) == 1 {
			return m[0]
		}
		return ""
	}
	read := func(p string) string { b, _ := os.ReadFile(p); return string(b) }

	task := "---\nsubject: Invoice 99\n---\nAnswer the client about invoice #99.\n"
	if err := os.WriteFile(filepath.Join(vault, "Needs_Action", "invoice.md"), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("the plan in Pending_Approval/", func() bool { return pendingFile() != "" })
	plan := pendingFile()
	// The file's instructions say what this instance accepts: with the
	// learner init configured, moving it to Rejected/ alone is enough.
	if howto := read(plan); !strings.Contains(howto, "A reason is optional") || strings.Contains(howto, "and say why") {
		t.Errorf("the pending approval file asks for a reason the learner makes unnecessary:\n%s", howto)
	}
	if err := os.Rename(plan, filepath.Join(vault, "Rejected", filepath.Base(plan))); err != nil {
		t.Fatal(err)
	}
	learning := "Name the files a plan changes and how the change is verified"
	want := `Rejected plan for "Invoice 99": ` + learning
	waitFor("the learning in Agent_Memory.md", func() bool { return strings.Contains(read(filepath.Join(vault, "Agent_Memory.md")), want) })
	waitFor("the reviewed rejection in Done/", func() bool {
		return strings.Contains(read(filepath.Join(vault, "Done", filepath.Base(plan))), "rejected_reviewed")
	})

	var learner *fakellm.Record
	for _, r := range model.Requests() {
		if r.Rule == "learner" {
			learner = &r
		}
	}
	if learner == nil {
		t.Fatal("the learner never asked the model")
	}
	if !strings.Contains(learner.User, "Answer the client about invoice #99.") || !strings.Contains(learner.User, "# Plan: add a /health endpoint") {
		t.Errorf("the learner did not work from the task and the plan:\n%s", learner.User)
	}
	if strings.Contains(learner.User, "Why the human rejected it") {
		t.Errorf("the learner was given a reason nobody wrote:\n%s", learner.User)
	}

	if err := os.WriteFile(filepath.Join(vault, "Needs_Action", "supplier.md"), []byte("Reply to the supplier.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("the second plan in Pending_Approval/", func() bool { return pendingFile() != "" })
	var planners []fakellm.Record
	for _, r := range model.Requests() {
		if r.Rule == "planner" && strings.Contains(r.User, "Reply to the supplier.") {
			planners = append(planners, r)
		}
	}
	if len(planners) == 0 || !strings.Contains(planners[0].Prompt(), learning) {
		t.Errorf("the next task's planner prompt does not carry the learning %q: %+v", learning, planners)
	}

	// The vault never makes the workspace dirty: forage is not refused.
	st, err := exec.Command("git", "-C", ws, "status", "--porcelain").CombinedOutput()
	if err != nil || strings.Contains(string(st), "vault") {
		t.Errorf("git status shows the vault (%v):\n%s", err, st)
	}
	run("forage", "--goal", "Add a /health endpoint")
}

// stacktestName is a fresh instance name for this test.
func stacktestName(t *testing.T) string {
	t.Helper()
	return newWorkspace(t, twoAgents).Name
}

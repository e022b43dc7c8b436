package coder

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/cub"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/tool"
)

const workflowID = "3f2a9c1e-7b4d-4e2a-9c1e-000000000001"

// workspace is a Git repository with one commit and, like a user's
// checkout, an uncommitted change and an untracked file.
type workspace struct {
	t    *testing.T
	dir  string
	base string
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("these tests need git")
	}
	w := &workspace{t: t, dir: t.TempDir()}
	w.git("init", "-q", "-b", "main")
	w.write("README.md", "# demo\n")
	w.git("add", "README.md")
	w.git("commit", "-q", "-m", "initial")
	w.base = w.git("rev-parse", "HEAD")
	w.write("README.md", "# demo\nwork in progress by the user\n")
	w.write("notes.txt", "the user's untracked notes\n")
	return w
}

func (w *workspace) git(args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", w.dir, "-c", "user.name=User", "-c", "user.email=user@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (w *workspace) write(name, content string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, name), []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// untouched checks that the user's checkout is as the user left it.
func (w *workspace) untouched() {
	w.t.Helper()
	if b := w.git("branch", "--show-current"); b != "main" {
		w.t.Errorf("the user's branch is %q now", b)
	}
	if h := w.git("rev-parse", "main"); h != w.base {
		w.t.Errorf("the user's branch moved to %s", h)
	}
	if st := w.git("status", "--porcelain"); st != "M README.md\n?? notes.txt" && st != " M README.md\n?? notes.txt" {
		w.t.Errorf("the user's working tree changed: %q", st)
	}
	if b, _ := os.ReadFile(filepath.Join(w.dir, "README.md")); !strings.Contains(string(b), "work in progress by the user") {
		w.t.Error("the user's change is gone")
	}
}

// standIn writes a POSIX sh script that plays the coding CLI: it saves its
// stdin and argv next to the workspace and counts its runs, then runs body
// in its working directory (the worktree).
func standIn(t *testing.T, body string) (script, dataDir string) {
	t.Helper()
	dataDir = t.TempDir()
	script = filepath.Join(dataDir, "cli.sh")
	src := "#!/bin/sh\nset -e\n" +
		"cat > '" + dataDir + "/stdin'\n" +
		"printf '%s\\n' \"$@\" > '" + dataDir + "/argv'\n" +
		"echo run >> '" + dataDir + "/runs'\n" +
		"pwd > '" + dataDir + "/pwd'\n" + body + "\n"
	if err := os.WriteFile(script, []byte(src), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, dataDir
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func planInput() tool.Input {
	return tool.Input{
		ClaimID: "claim-0001", ClaimType: tool.ClaimTypeExclusive,
		TargetArtefact: tool.Artefact{ID: "plan-1", LogicalID: "plan-1", Version: 2, Type: "Plan", ProducedByRole: "planner",
			Payload: "# Plan: add /health\n1. Add health.go.", WorkflowID: workflowID},
		Workflow: tool.Workflow{ID: workflowID, Goal: "Add a /health endpoint"},
		Memory:   tool.Memory{Learnings: "# Agent Memory\n- Always add a test.", Handbook: "Use the standard library."},
		Agent:    "coder",
	}
}

type result struct {
	err    error
	stdout string
	stderr string
	out    tool.Output
}

func runCoder(t *testing.T, ws *workspace, command []string, in tool.Input, mutate ...func(*Config)) result {
	t.Helper()
	cfg := Config{Command: command, Template: "coder", Timeout: time.Minute, BranchPrefix: "sett/", AuthorName: "Sett coder",
		AuthorEmail: "sett-coder@localhost", Workspace: ws.dir}
	for _, m := range mutate {
		m(&cfg)
	}
	var stdout, stderr bytes.Buffer
	c := &Coder{Config: cfg, Stdout: &stdout, Stderr: &stderr,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "ANTHROPIC_API_KEY=sk-ant-coder-secret-1"}}
	stdin, _ := json.Marshal(in)
	r := result{err: c.Run(context.Background(), bytes.NewReader(stdin))}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	claimType := in.ClaimType
	if r.err != nil {
		claimType = tool.ClaimTypeFeedback
	}
	out, err := tool.ParseOutput(stdout.Bytes(), claimType, 0)
	if err != nil {
		t.Fatalf("the cub would refuse this output: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	r.out = out
	if strings.Contains(r.stdout+r.stderr, "sk-ant-coder-secret-1") {
		t.Error("the key was printed")
	}
	return r
}

func TestEditCommitsOnceOnTheWorkflowBranch(t *testing.T) {
	ws := newWorkspace(t)
	script, data := standIn(t, `printf 'package main\n' > health.go; printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Added health.go.\nDone.","usage":{"input_tokens":100,"cache_read_input_tokens":20,"output_tokens":30},"modelUsage":{"claude-sonnet-4-5":{}}}'`)
	r := runCoder(t, ws, []string{script}, planInput())
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	hash := r.out.ArtefactPayload
	if r.out.ArtefactType != "CodeCommit" || len(hash) != 40 {
		t.Fatalf("out = %+v", r.out)
	}
	// The cub's own CodeCommit check accepts it.
	if err := cub.CheckCommit(context.Background(), ws.dir, hash); err != nil {
		t.Fatalf("CheckCommit: %v", err)
	}
	if tip := ws.git("rev-parse", "sett/3f2a9c1e"); tip != hash {
		t.Errorf("branch sett/3f2a9c1e is at %s, want %s", tip, hash)
	}
	if n := ws.git("rev-list", "--count", ws.base+".."+hash); n != "1" {
		t.Errorf("%s commits on the branch, want exactly 1", n)
	}
	if files := ws.git("show", "--name-only", "--format=", hash); files != "health.go" {
		t.Errorf("the commit holds %q", files)
	}
	msg := ws.git("log", "-1", "--format=%B", hash)
	for _, want := range []string{"sett: Add a /health endpoint", "Added health.go.", "Sett-Workflow: " + workflowID, "Sett-Claim: claim-0001", "Sett-Agent: coder"} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message lacks %q:\n%s", want, msg)
		}
	}
	if author := ws.git("log", "-1", "--format=%an <%ae>", hash); author != "Sett coder <sett-coder@localhost>" {
		t.Errorf("author = %s", author)
	}
	if !strings.Contains(r.out.Summary, "sett/3f2a9c1e: "+hash[:12]) || !strings.Contains(r.out.Summary, "1 file changed") ||
		!strings.HasSuffix(r.out.Summary, ": Added health.go.") {
		t.Errorf("summary = %q", r.out.Summary)
	}
	if u := r.out.Usage; u == nil || u.Model != "claude-sonnet-4-5" || u.InputTokens != 120 || u.OutputTokens != 30 {
		t.Errorf("usage = %+v", u)
	}
	// The memory of the contract (issue 28): DONE, the diff stat, the
	// branch and commit; the cub's parser accepts it as it is.
	m, err := memory.ParseAgentMemory(r.out.Memory)
	if err != nil {
		t.Fatalf("memory %s: %v", r.out.Memory, err)
	}
	if m.Status != memory.StatusDone || len(m.KeyFindings) != 1 || !strings.Contains(m.KeyFindings[0], "1 file changed") ||
		len(m.ArtifactIndex) != 1 || m.ArtifactIndex[0].Path != "sett/3f2a9c1e" || !strings.Contains(m.ArtifactIndex[0].Note, "commit "+hash[:12]) {
		t.Errorf("memory = %+v", m)
	}
	// The CLI got the prompt on stdin and ran in a worktree under .git,
	// which is gone now.
	prompt := readFile(t, filepath.Join(data, "stdin"))
	for _, want := range []string{"You are the coder", "## Agent Memory", "Always add a test.", "Use the standard library.", "1. Add health.go."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	if pwd := strings.TrimSpace(readFile(t, filepath.Join(data, "pwd"))); !strings.HasSuffix(pwd, ".git/sett-worktrees/3f2a9c1e") {
		t.Errorf("the CLI ran in %s", pwd)
	}
	if _, err := os.Stat(filepath.Join(ws.dir, ".git", "sett-worktrees", "3f2a9c1e")); !os.IsNotExist(err) {
		t.Errorf("the worktree is still there: %v", err)
	}
	if wts := ws.git("worktree", "list"); strings.Count(wts, "\n") != 0 {
		t.Errorf("worktrees left: %s", wts)
	}
	ws.untouched()
}

func TestReworkAndRerunsReuseTheBranch(t *testing.T) {
	ws := newWorkspace(t)
	// Each run appends its run count, so each run changes the file.
	script, data := standIn(t, `wc -l < "$(dirname "$0")/runs" >> health.go`)
	first := runCoder(t, ws, []string{script}, planInput())
	if first.err != nil {
		t.Fatal(first.err)
	}
	// The reviewer rejected the commit: a feedback claim on it.
	in := planInput()
	in.ClaimID, in.ClaimType = "claim-0002", tool.ClaimTypeFeedback
	in.TargetArtefact = tool.Artefact{ID: "cc-1", Type: "CodeCommit", Version: 1, ProducedByRole: "coder", Payload: first.out.ArtefactPayload, WorkflowID: workflowID}
	in.Feedback = []tool.Artefact{{ID: "rev-1", Type: "Review", ProducedByRole: "reviewer", Payload: `{"verdict":"reject","severity":"Major","findings":["Add a test for /health."]}`}}
	second := runCoder(t, ws, []string{script}, in)
	if second.err != nil {
		t.Fatal(second.err)
	}
	if parent := ws.git("rev-parse", second.out.ArtefactPayload+"^"); parent != first.out.ArtefactPayload {
		t.Errorf("the rework's parent is %s, want the first commit %s", parent, first.out.ArtefactPayload)
	}
	prompt := readFile(t, filepath.Join(data, "stdin"))
	if !strings.Contains(prompt, "Your previous change is commit "+first.out.ArtefactPayload) || !strings.Contains(prompt, "- Add a test for /health.") {
		t.Errorf("the rework prompt:\n%s", prompt)
	}
	if !strings.Contains(ws.git("log", "-1", "--format=%B", second.out.ArtefactPayload), "Rework of CodeCommit v1 after 1 review(s).") {
		t.Error("the rework's message does not say so")
	}

	// The same claim again (the cub died before storing the answer): the
	// same commit, and the CLI is not run again.
	again := runCoder(t, ws, []string{script}, in)
	if again.err != nil || again.out.ArtefactPayload != second.out.ArtefactPayload {
		t.Fatalf("rerun: %v %+v", again.err, again.out)
	}
	if runs := strings.Count(readFile(t, filepath.Join(data, "runs")), "run"); runs != 2 {
		t.Errorf("the CLI ran %d times, want 2", runs)
	}
	ws.untouched()
}

func TestCLICommitsAreSquashedIntoOne(t *testing.T) {
	ws := newWorkspace(t)
	script, _ := standIn(t, `git -c user.name=c -c user.email=c@x commit -q --allow-empty -m one
echo a > a.txt; git add a.txt; git -c user.name=c -c user.email=c@x commit -q -m two
echo b > b.txt`)
	r := runCoder(t, ws, []string{script}, planInput())
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n := ws.git("rev-list", "--count", ws.base+".."+r.out.ArtefactPayload); n != "1" {
		t.Errorf("%s commits, want 1", n)
	}
	if files := ws.git("show", "--name-only", "--format=", r.out.ArtefactPayload); files != "a.txt\nb.txt" {
		t.Errorf("files = %q", files)
	}
}

func TestNoChangeIsAFailureWithTheOutputTail(t *testing.T) {
	ws := newWorkspace(t)
	script, _ := standIn(t, `echo "I looked around and found nothing to do."; echo "warning: nothing changed" >&2`)
	r := runCoder(t, ws, []string{script}, planInput())
	if r.err == nil {
		t.Fatal("a run that changed nothing succeeded")
	}
	f := r.out
	if f.Retryable == nil || *f.Retryable || !strings.Contains(f.Error, "finished but changed nothing on branch sett/3f2a9c1e") ||
		!strings.Contains(f.Error, `I looked around and found nothing to do.`) || !strings.Contains(f.Error, "warning: nothing changed") {
		t.Errorf("failure = %+v", f)
	}
	if n := ws.git("rev-list", "--count", ws.base+"..sett/3f2a9c1e"); n != "0" {
		t.Errorf("%s commits on the branch", n)
	}
	ws.untouched()
}

func TestFailingCLIIsAFailureWithTheOutputTail(t *testing.T) {
	ws := newWorkspace(t)
	script, _ := standIn(t, `echo half > half.txt; echo "API error: overloaded ANTHROPIC_API_KEY=$ANTHROPIC_API_KEY" >&2; exit 3`)
	r := runCoder(t, ws, []string{script}, planInput())
	if r.err == nil {
		t.Fatal("a failing CLI succeeded")
	}
	if f := r.out; f.Retryable != nil || !strings.Contains(f.Error, "failed: exit status 3") || !strings.Contains(f.Error, "API error: overloaded") ||
		!strings.Contains(f.Error, "[REDACTED]") {
		t.Errorf("failure = %+v", f)
	}
	if n := ws.git("rev-list", "--count", ws.base+"..sett/3f2a9c1e"); n != "0" {
		t.Error("a failed run committed")
	}
	ws.untouched()

	// Claude Code can exit 0 and still report an error.
	script, _ = standIn(t, `echo '{"type":"result","subtype":"error_max_turns","is_error":true,"result":""}'`)
	r = runCoder(t, ws, []string{script}, planInput())
	if r.err == nil || !strings.Contains(r.out.Error, "reported an error: error_max_turns") {
		t.Errorf("is_error: %v %+v", r.err, r.out)
	}
}

func TestTimeoutIsRetryable(t *testing.T) {
	ws := newWorkspace(t)
	script, _ := standIn(t, `echo started; exec sleep 30`)
	r := runCoder(t, ws, []string{script}, planInput(), func(c *Config) { c.Timeout = 300 * time.Millisecond })
	if f := r.out; r.err == nil || f.Retryable == nil || !*f.Retryable || !strings.Contains(f.Error, "did not finish within 300ms") {
		t.Errorf("failure = %+v", f)
	}
}

func TestPromptPlaceholderGoesToArgv(t *testing.T) {
	ws := newWorkspace(t)
	script, data := standIn(t, `echo x > x.txt`)
	r := runCoder(t, ws, []string{script, "--print", PromptPlaceholder, "--json"}, planInput())
	if r.err != nil {
		t.Fatal(r.err)
	}
	argv := readFile(t, filepath.Join(data, "argv"))
	if !strings.HasPrefix(argv, "--print\nYou are the coder") || !strings.HasSuffix(argv, "--json\n") {
		t.Errorf("argv = %q", argv)
	}
	if readFile(t, filepath.Join(data, "stdin")) != "" {
		t.Error("the prompt went to stdin as well")
	}
}

func TestRefusals(t *testing.T) {
	ws := newWorkspace(t)
	script, _ := standIn(t, `echo x > x.txt`)

	// The user has the workflow's branch checked out.
	ws.git("branch", "sett/3f2a9c1e")
	ws.git("stash", "-q", "-u")
	ws.git("checkout", "-q", "sett/3f2a9c1e")
	r := runCoder(t, ws, []string{script}, planInput())
	if f := r.out; r.err == nil || *f.Retryable || !strings.Contains(f.Error, "branch sett/3f2a9c1e is checked out elsewhere") {
		t.Errorf("checked out: %+v", f)
	}
	ws.git("checkout", "-q", "main")
	ws.git("stash", "pop", "-q")

	// Another run holds the workflow.
	repo, err := OpenRepo(context.Background(), ws.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	unlock, busy, err := repo.lock("3f2a9c1e")
	if err != nil || busy {
		t.Fatal(err, busy)
	}
	r = runCoder(t, ws, []string{script}, planInput())
	unlock()
	if f := r.out; r.err == nil || !*f.Retryable || !strings.Contains(f.Error, "another run of the coder is working on branch sett/3f2a9c1e") {
		t.Errorf("locked: %+v", f)
	}

	// A review claim, a workspace that is no repository, a missing CLI.
	in := planInput()
	in.ClaimType = tool.ClaimTypeReview
	if r = runCoder(t, ws, []string{script}, in); r.err == nil || !strings.Contains(r.out.Error, `not "review" claims`) {
		t.Errorf("review claim: %+v", r.out)
	}
	plain := &workspace{t: t, dir: t.TempDir()}
	if r = runCoder(t, plain, []string{script}, planInput()); r.err == nil || !strings.Contains(r.out.Error, "is not a Git repository") {
		t.Errorf("no repo: %+v", r.out)
	}
	if r = runCoder(t, ws, []string{"no-such-coding-cli"}, planInput()); r.err == nil || *r.out.Retryable || !strings.Contains(r.out.Error, "could not start") {
		t.Errorf("missing CLI: %+v", r.out)
	}
	ws.untouched()
}

func TestParseConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := ParseConfig(nil, env(nil), &bytes.Buffer{})
	if err != nil || strings.Join(c.Command, " ") != "claude -p --output-format json --permission-mode acceptEdits" || c.Template != "coder" ||
		c.Timeout != DefaultTimeout || c.BranchPrefix != "sett/" {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = ParseConfig([]string{"--timeout", "20m", "--", "aider", "--yes", "--message", "{prompt}"}, env(map[string]string{EnvWorkspace: "/workspace"}), &bytes.Buffer{})
	if err != nil || strings.Join(c.Command, " ") != "aider --yes --message {prompt}" || c.Timeout != 20*time.Minute || c.Workspace != "/workspace" {
		t.Fatalf("args: %+v %v", c, err)
	}
	c, err = ParseConfig(nil, env(map[string]string{EnvCommand: `["codex","exec","{prompt}"]`}), &bytes.Buffer{})
	if err != nil || strings.Join(c.Command, " ") != "codex exec {prompt}" {
		t.Fatalf("env: %+v %v", c, err)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, map[string]string{EnvCommand: "claude -p"}, "must be a JSON list"},
		{[]string{"--command", `["a"]`, "b"}, nil, "given twice"},
		{nil, map[string]string{EnvTimeout: "-1s"}, "--timeout (CODER_TIMEOUT)"},
		{[]string{"--branch-prefix", "a..b/"}, nil, "cannot start a Git branch name"},
	} {
		if _, err := ParseConfig(tc.args, env(tc.env), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%v, %v) = %v, want %q", tc.args, tc.env, err, tc.want)
		}
	}
}

func TestShortID(t *testing.T) {
	for in, want := range map[string]string{workflowID: "3f2a9c1e", "AB-cd": "abcd", "": "", "../x": "x"} {
		if got := shortID(in); got != want {
			t.Errorf("shortID(%q) = %q, want %q", in, got, want)
		}
	}
}

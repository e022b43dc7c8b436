package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/cub"
	"github.com/settdev/sett/internal/fakellm"
	"github.com/settdev/sett/internal/stacktest"
)

// codingBinaries builds sett-agent-llm and sett-coder into a directory
// of the test (stacktest builds the daemons and the example agents).
func codingBinaries(t *testing.T) (llm, coder string) {
	t.Helper()
	dir := t.TempDir()
	llm, coder = filepath.Join(dir, "sett-agent-llm"), filepath.Join(dir, "sett-coder")
	for out, pkg := range map[string]string{llm: "../agents/llm", coder: "../agents/coder"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, msg)
		}
	}
	return llm, coder
}

// codingConfig is the sett.yml that `sett init --template coding` writes
// (internal/scaffold/coding/sett.yml), adapted to processes on this host:
// the agents' commands are the binaries just built, the LLM agents ask the
// fake provider at baseURL, and the coder runs cli instead of Claude Code.
func codingConfig(t *testing.T, llm, coder, cli, baseURL string) string {
	t.Helper()
	raw, err := os.ReadFile("../internal/scaffold/coding/sett.yml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	orch := doc["orchestrator"].(map[string]any)
	orch["bid_timeout"], orch["lease_ttl"] = "2s", "3s"
	llmEnv := map[string]any{"OPENAI_BASE_URL": baseURL + "/v1", "OPENAI_API_KEY": "sk-integration-key-01",
		"LLM_MODEL": "fake-gpt", "LLM_TIMEOUT": "50s"}
	for name, a := range doc["agents"].(map[string]any) {
		agent := a.(map[string]any)
		cmd := agent["command"].([]any)
		switch cmd[0] {
		case "sett-agent-llm":
			cmd[0] = llm
			agent["environment"] = llmEnv
		case "sett-coder":
			agent["command"] = []any{coder, "--", cli}
			agent["environment"] = map[string]any{"ANTHROPIC_API_KEY": "sk-ant-integration-02", "CODER_TIMEOUT": "50s"}
		default:
			t.Fatalf("agent %s runs %v: the coding template changed, adapt this test", name, cmd)
		}
		agent["timeout"] = "1m"
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestCodingTemplatePipeline runs the coding template's pipeline on this
// host against the fake provider, with humans in the middle: the planner's
// first plan is approved but the LLM reviewer rejects it; the rework is
// rejected by a human, which the learner turns into a learning and the
// planner reworks again; that plan is approved by the human and the
// reviewer, the coder (a stand-in for Claude Code) commits on the
// workflow's branch, and the reviewer approves the commit.
func TestCodingTemplatePipeline(t *testing.T) {
	t.Parallel()
	llm, coder := codingBinaries(t)
	fs := fakellm.New(fakellm.DemoScript())
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)

	// The stand-in coding CLI: saves its prompt, writes two files in its
	// working directory (the worktree), answers as Claude Code does.
	cliDir := t.TempDir()
	cli := filepath.Join(cliDir, "claude-stand-in.sh")
	script := `#!/bin/sh
set -e
cat > "` + cliDir + `/prompt"
printf 'package main\n\n// health answers 200.\n' > health.go
printf 'package main\n' > health_test.go
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"Added health.go and its test.","usage":{"input_tokens":900,"output_tokens":120},"modelUsage":{"claude-stand-in":{}}}'
`
	if err := os.WriteFile(cli, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	s := stacktest.New(t, codingConfig(t, llm, coder, cli, srv.URL))
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", s.Dir, "-c", "user.name=User", "-c", "user.email=user@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", "sett.yml")
	git("commit", "-q", "-m", "sett init --template coding")
	base := git("rev-parse", "HEAD")

	s.Up("planner", "reviewer", "coder", "learner")
	ctx := context.Background()
	wf := s.PostGoal("Add a /health endpoint")
	decide := func(version int, d blackboard.ApprovalDecision, reason string) {
		t.Helper()
		req := waitPending(t, s, wf, version)
		if err := s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: req.ArtefactID, Decision: d, By: "alice",
			Channel: blackboard.ChannelCLI, Reason: reason}); err != nil {
			t.Fatal(err)
		}
	}
	decide(1, blackboard.ApprovalApproved, "")                            // then the LLM reviewer rejects v1
	decide(2, blackboard.ApprovalRejected, "Name the test file as well.") // on_reject: rework
	ls := waitLearnings(t, s, 1)
	if l := ls[0]; l.Source != blackboard.LearningFromLearner || !strings.Contains(l.Text, "Name the files a plan changes") {
		t.Fatalf("learning %+v: want the learner's", l)
	}
	decide(3, blackboard.ApprovalApproved, "")
	w := s.WaitWorkflow(wf, wait)
	arts := s.Artefacts(wf)
	if w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed; artefacts: %v", w.Status, w.Outcome, typesOf(arts))
	}

	plans := stacktest.OfType(arts, "Plan")
	if len(plans) != 3 {
		t.Fatalf("%d plans, want v1, v2, v3: %v", len(plans), typesOf(arts))
	}
	for _, a := range append(plans, stacktest.OfType(arts, "Review")...) {
		if a.Metadata["model"] != "fake-gpt" || a.Metadata["output_tokens"] == "" {
			t.Errorf("%s v%d: metadata %v lacks the usage", a.Type, a.Version, a.Metadata)
		}
	}
	var verdicts []string
	for _, r := range stacktest.OfType(arts, "Review") {
		var v struct{ Verdict string }
		if err := json.Unmarshal([]byte(r.Payload), &v); err != nil {
			t.Fatalf("review payload %q", r.Payload)
		}
		verdicts = append(verdicts, v.Verdict)
	}
	slices.Sort(verdicts)
	if strings.Join(verdicts, ",") != "approve,approve,reject" {
		t.Errorf("LLM verdicts %v: want v1 rejected, v3 and the commit approved", verdicts)
	}

	commits := stacktest.OfType(arts, "CodeCommit")
	if len(commits) != 1 {
		t.Fatalf("%d CodeCommits: %v", len(commits), typesOf(arts))
	}
	hash := commits[0].Payload
	if err := cub.CheckCommit(ctx, s.Dir, hash); err != nil {
		t.Fatal(err)
	}
	branch := "sett/" + strings.ReplaceAll(wf, "-", "")[:8]
	if tip := git("rev-parse", branch); tip != hash {
		t.Errorf("%s is at %s, want the CodeCommit %s", branch, tip, hash)
	}
	if files := git("show", "--name-only", "--format=", hash); files != "health.go\nhealth_test.go" {
		t.Errorf("the commit holds %q", files)
	}
	if n := git("rev-list", "--count", base+".."+hash); n != "1" {
		t.Errorf("%s commits on %s, want 1", n, branch)
	}
	if head := git("rev-parse", "HEAD"); head != base || git("branch", "--show-current") != "main" {
		t.Errorf("the user's checkout moved: HEAD %s on %s", head, git("branch", "--show-current"))
	}
	if commits[0].Metadata["model"] != "claude-stand-in" || commits[0].Metadata["input_tokens"] != "900" {
		t.Errorf("CodeCommit metadata %v", commits[0].Metadata)
	}

	// What the agents were told: the coder got the approved plan and the
	// learning; the reviewer saw the commit's diff and the learning.
	prompt, err := os.ReadFile(filepath.Join(cliDir, "prompt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(prompt), "health_test.go") || !strings.Contains(string(prompt), "Name the files a plan changes") {
		t.Errorf("the coder's prompt lacks the plan or the learning:\n%s", prompt)
	}
	var codeReview *fakellm.Record
	for _, r := range fs.Requests() {
		if strings.Contains(r.User, "## Work to review: CodeCommit") {
			codeReview = &r
		}
	}
	if codeReview == nil {
		t.Fatal("the reviewer never reviewed the commit")
	}
	if !strings.Contains(codeReview.User, "Commit "+hash+":") || !strings.Contains(codeReview.User, "+// health answers 200.") ||
		!strings.Contains(codeReview.System, "## Agent Memory") || !strings.Contains(codeReview.System, "Name the files a plan changes") {
		t.Errorf("the commit review prompt:\n%s\n%s", codeReview.System, codeReview.User)
	}
}

func typesOf(arts []*blackboard.Artefact) []string {
	out := make([]string, len(arts))
	for i, a := range arts {
		out[i] = fmt.Sprintf("%s v%d (%s)", a.Type, a.Version, a.ProducedByRole)
	}
	return out
}

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/fakellm"
	"github.com/settdev/sett/internal/tool"
)

// These tests run the real binaries as the cub runs a tool (internal/tool.Run
// with a scrubbed environment) against the real sett-fake-llm binary.

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds sett-agent-llm and sett-fake-llm once per test process.
func binaries(t testing.TB) (agent, fake string) {
	t.Helper()
	if testing.Short() {
		t.Skip("process test: builds and runs the binaries (run without -short)")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "sett-llm-exec-*")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator), "../../agents/llm", "../../cmd/sett-fake-llm")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "llm"), filepath.Join(binDir, "sett-fake-llm")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// startFake starts sett-fake-llm with args on a free loopback port and
// returns its base URL; it is stopped at cleanup.
func startFake(t *testing.T, fake string, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addr")
	cmd := exec.Command(fake, append([]string{"--addr", "127.0.0.1:0", "--addr-file", addrFile}, args...)...)
	logf, err := os.Create(filepath.Join(dir, "fake.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("sett-fake-llm did not stop cleanly: %v", err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("sett-fake-llm ignored SIGTERM")
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("sett-fake-llm log:\n%s", b)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(addrFile); err == nil {
			return "http://" + strings.TrimSpace(string(b))
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logf.Name())
			t.Fatalf("sett-fake-llm exited: %v\n%s", err, b)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			t.Fatal("sett-fake-llm did not start listening within 30s")
		}
	}
}

// requests reads GET /requests.
func requests(t *testing.T, base string) []fakellm.Record {
	t.Helper()
	resp, err := http.Get(base + "/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var recs []fakellm.Record
	if err := json.NewDecoder(resp.Body).Decode(&recs); err != nil {
		t.Fatal(err)
	}
	return recs
}

// runTool runs the agent as the cub does and parses what it printed.
func runTool(t *testing.T, agent string, env map[string]string, args []string, in tool.Input) (tool.Result, tool.Output) {
	t.Helper()
	stdin, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{"SETT_INSTANCE": "exec", "SETT_AGENT": in.Agent, "SETT_CLAIM_ID": in.ClaimID, "SETT_WORKSPACE": t.TempDir()}
	for k, v := range env {
		extra[k] = v
	}
	res := tool.Run(t.Context(), tool.Spec{Command: append([]string{agent}, args...), Dir: t.TempDir(),
		Env: tool.ScrubbedEnv(os.Environ(), nil, extra), Stdin: stdin, Timeout: time.Minute})
	claimType := in.ClaimType
	if res.Failure != "" {
		claimType = tool.ClaimTypeFeedback // how the cub reads a failing tool's report
	}
	out, err := tool.ParseOutput(res.Stdout, claimType, 0)
	if err != nil {
		t.Fatalf("the cub would refuse this output: %v\nstdout: %s\nstderr: %s", err, res.Stdout, res.Stderr)
	}
	return res, out
}

func goal() tool.Artefact {
	return tool.Artefact{ID: "goal-0001", LogicalID: "goal-0001", Version: 1, Type: "GoalDefined", ProducedByRole: "user",
		Payload: "Add a /health endpoint", WorkflowID: "goal-0001"}
}

func TestDemoPipelineThroughTheBinaries(t *testing.T) {
	agent, fake := binaries(t)
	base := startFake(t, fake, "--api-key", "sk-exec-test-key-1")
	env := map[string]string{"OPENAI_BASE_URL": base + "/v1", "OPENAI_API_KEY": "sk-exec-test-key-1", "LLM_MODEL": "fake-gpt"}
	wf := tool.Workflow{ID: "goal-0001", Goal: "Add a /health endpoint"}
	mem := tool.Memory{Learnings: "# Agent Memory\n\n## Patterns\n- **2026-01-01T00:00:00Z** — Rejected plan for \"x\": Name the files.",
		Handbook: "Never deploy on Fridays."}

	// planner: goal -> Plan v1
	res, plan1 := runTool(t, agent, env, []string{"--template", "planner"}, tool.Input{ClaimID: "c1", ClaimType: tool.ClaimTypeExclusive,
		TargetArtefact: goal(), ContextChain: []tool.Artefact{}, Workflow: wf, Memory: mem, Agent: "planner"})
	if res.Failure != "" || plan1.ArtefactType != "Plan" || !strings.HasPrefix(plan1.ArtefactPayload, "# Plan: add a /health endpoint") ||
		plan1.Usage == nil || plan1.Usage.Model != "fake-gpt" {
		t.Fatalf("planner: %s %+v\n%s", res.Failure, plan1, res.Stderr)
	}
	planV1 := tool.Artefact{ID: "plan-0001", LogicalID: "plan-0001", Version: 1, Type: "Plan", ProducedByRole: "planner", Payload: plan1.ArtefactPayload}

	// reviewer: Plan v1 -> rejected with findings (the demo script)
	_, rev1 := runTool(t, agent, env, []string{"--template", "reviewer"}, tool.Input{ClaimID: "c2", ClaimType: tool.ClaimTypeReview,
		TargetArtefact: planV1, ContextChain: []tool.Artefact{goal()}, Workflow: wf, Memory: mem, Agent: "reviewer"})
	var verdict struct {
		Verdict  string   `json:"verdict"`
		Severity string   `json:"severity"`
		Findings []string `json:"findings"`
	}
	if err := json.Unmarshal([]byte(rev1.ArtefactPayload), &verdict); err != nil || verdict.Verdict != "reject" || verdict.Severity != "Major" || len(verdict.Findings) != 2 {
		t.Fatalf("review 1: %+v (%v)", rev1, err)
	}
	review1 := tool.Artefact{ID: "rev-0001", LogicalID: "rev-0001", Version: 1, Type: "Review", StructuralType: "Review", ProducedByRole: "reviewer", Payload: rev1.ArtefactPayload}

	// planner on the feedback claim -> v2 naming files
	_, plan2 := runTool(t, agent, env, []string{"--template", "planner"}, tool.Input{ClaimID: "c3", ClaimType: tool.ClaimTypeFeedback,
		TargetArtefact: planV1, ContextChain: []tool.Artefact{review1, goal()}, Feedback: []tool.Artefact{review1}, Workflow: wf, Memory: mem, Agent: "planner"})
	if plan2.ArtefactType != "" || !strings.Contains(plan2.ArtefactPayload, "health_test.go") {
		t.Fatalf("rework: %+v", plan2)
	}

	// reviewer: Plan v2 -> approved
	planV2 := planV1
	planV2.ID, planV2.Version, planV2.Payload = "plan-0002", 2, plan2.ArtefactPayload
	_, rev2 := runTool(t, agent, env, []string{"--template", "reviewer"}, tool.Input{ClaimID: "c4", ClaimType: tool.ClaimTypeReview,
		TargetArtefact: planV2, ContextChain: []tool.Artefact{planV1, goal()}, Workflow: wf, Memory: mem, Agent: "reviewer"})
	if !strings.HasPrefix(rev2.ArtefactPayload, `{"verdict":"approve"`) {
		t.Fatalf("review 2: %+v", rev2)
	}

	// learner on a human rejection
	human := tool.Artefact{ID: "h-1", Type: "Review", ProducedByRole: "human", Payload: "Too vague."}
	_, learning := runTool(t, agent, env, []string{"--template", "learner"}, tool.Input{ClaimID: "c5", ClaimType: tool.ClaimTypeLearn,
		TargetArtefact: planV1, Feedback: []tool.Artefact{human}, Workflow: wf, Memory: mem, Agent: "learner"})
	if learning.ArtefactType != "Learning" || strings.Contains(learning.ArtefactPayload, "\n") || learning.ArtefactPayload == "" {
		t.Fatalf("learning: %+v", learning)
	}

	recs := requests(t, base)
	if len(recs) != 5 {
		t.Fatalf("%d requests, want 5", len(recs))
	}
	wantRules := []string{"planner", "reviewer-plan", "planner-rework", "reviewer-plan", "learner"}
	for i, rec := range recs {
		if rec.Rule != wantRules[i] || rec.Status != 200 || !rec.HasKey || rec.Model != "fake-gpt" {
			t.Errorf("request %d: %+v", i+1, rec)
		}
	}
	if !strings.Contains(recs[0].System, "## Agent Memory") || !strings.Contains(recs[0].System, "Name the files.") ||
		!strings.Contains(recs[0].System, "## Company Handbook") || !strings.Contains(recs[0].System, "Never deploy on Fridays.") {
		t.Errorf("the planner's instructions lack the memory:\n%s", recs[0].System)
	}
	if !strings.Contains(recs[2].User, "## Reviews to address") || !strings.Contains(recs[2].User, "- Name the files the plan changes.") {
		t.Errorf("the rework prompt lacks the review:\n%s", recs[2].User)
	}
	if recs[1].ResponseFormat != "json_schema" {
		t.Errorf("the reviewer asks for json_schema, got %q", recs[1].ResponseFormat)
	}
}

func TestRateLimitAndRefusedKeyThroughTheBinaries(t *testing.T) {
	agent, fake := binaries(t)
	base := startFake(t, fake, "--faults", `[{"status":429,"retry_after":"1","times":1}]`, "--api-key", "sk-exec-right-key")
	in := tool.Input{ClaimID: "c1", ClaimType: tool.ClaimTypeExclusive, TargetArtefact: goal(),
		Workflow: tool.Workflow{ID: "goal-0001", Goal: "Add a /health endpoint"}, Agent: "planner"}

	res, out := runTool(t, agent, map[string]string{"OPENAI_BASE_URL": base + "/v1", "OPENAI_API_KEY": "sk-exec-right-key", "LLM_MODEL": "m"},
		[]string{"--template", "planner"}, in)
	if res.Failure != "" || out.ArtefactType != "Plan" {
		t.Fatalf("%s %+v\n%s", res.Failure, out, res.Stderr)
	}
	if recs := requests(t, base); len(recs) != 2 || recs[0].Status != 429 || recs[1].Status != 200 {
		t.Fatalf("requests: %+v", recs)
	}

	const wrong = "sk-exec-wrong-key-0042"
	res, out = runTool(t, agent, map[string]string{"OPENAI_BASE_URL": base + "/v1", "OPENAI_API_KEY": wrong, "LLM_MODEL": "m"},
		[]string{"--template", "planner"}, in)
	if res.Failure != tool.FailureExitNonzero || res.ExitCode != 1 {
		t.Fatalf("a refused key: %s exit %d", res.Failure, res.ExitCode)
	}
	if out.Retryable == nil || *out.Retryable || !strings.Contains(out.Error, "set OPENAI_API_KEY to a valid key") {
		t.Errorf("failure = %+v", out)
	}
	if strings.Contains(string(res.Stdout)+string(res.Stderr), wrong) {
		t.Error("the key was printed")
	}
}

func TestAnthropicThroughTheBinaries(t *testing.T) {
	agent, fake := binaries(t)
	base := startFake(t, fake, "--api-key", "sk-ant-exec-key", "--model", "claude-fake")
	in := tool.Input{ClaimID: "c1", ClaimType: tool.ClaimTypeReview,
		TargetArtefact: tool.Artefact{ID: "p", Type: "Plan", Version: 1, ProducedByRole: "planner", Payload: "# Plan"},
		Workflow:       tool.Workflow{ID: "goal-0001", Goal: "Add a /health endpoint"}, Agent: "reviewer"}
	res, out := runTool(t, agent, map[string]string{"ANTHROPIC_BASE_URL": base, "ANTHROPIC_API_KEY": "sk-ant-exec-key", "LLM_MODEL": "claude-x"},
		[]string{"--template", "reviewer"}, in)
	if res.Failure != "" || out.ArtefactType != "Review" || !strings.Contains(out.ArtefactPayload, `"verdict":"reject"`) ||
		out.Usage == nil || out.Usage.Model != "claude-fake" {
		t.Fatalf("%s %+v\n%s", res.Failure, out, res.Stderr)
	}
	if rec := requests(t, base)[0]; rec.API != "anthropic" || rec.MaxTokens != 4096 || !strings.Contains(rec.System, "You are a reviewer") {
		t.Errorf("record = %+v", rec)
	}
}

// BenchmarkAgentOverhead is the LLM agent's own time per call, the model
// left out: the built binary run as the cub runs it (internal/tool.Run)
// against the fake provider in this process, so that both ends are on one
// clock. It reports the two parts — process start to the request at the
// provider, the provider's answer to the output read and the process gone —
// as custom metrics (ms/op). `make bench` has the same figures with
// percentiles (bench/scenario_llm_agent.go).
//
//	go test -run '^$' -bench AgentOverhead -benchtime 200x ./agents/llm
func BenchmarkAgentOverhead(b *testing.B) {
	agent, _ := binaries(b)
	fs := fakellm.New(fakellm.DemoScript())
	srv := httptest.NewServer(fs)
	defer srv.Close()
	in, err := json.Marshal(tool.Input{ClaimID: "c1", ClaimType: tool.ClaimTypeExclusive, TargetArtefact: goal(),
		Workflow: tool.Workflow{ID: "goal-0001", Goal: "Add a /health endpoint"}, Agent: "planner"})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	spec := tool.Spec{Command: []string{agent, "--template", "planner"}, Dir: dir, Stdin: in, Timeout: time.Minute,
		Env: tool.ScrubbedEnv(os.Environ(), nil, map[string]string{"SETT_WORKSPACE": dir, "OPENAI_BASE_URL": srv.URL + "/v1",
			"OPENAI_API_KEY": "sk-bench", "LLM_MODEL": "fake-model"})}
	var toRequest, fromResponse time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res := tool.Run(b.Context(), spec)
		if res.Failure != "" {
			b.Fatalf("%s: %s\n%s", res.Failure, res.Detail, res.StderrTail)
		}
		recs := fs.Requests()
		rec := recs[len(recs)-1]
		toRequest += rec.ReceivedAt.Sub(start)
		fromResponse += start.Add(res.Duration).Sub(rec.RespondedAt)
	}
	b.ReportMetric(float64(toRequest.Microseconds())/1000/float64(b.N), "start-to-request-ms/op")
	b.ReportMetric(float64(fromResponse.Microseconds())/1000/float64(b.N), "response-to-output-ms/op")
}

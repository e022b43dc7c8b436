package integration

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/fakellm"
	"github.com/settdev/sett/internal/stacktest"
)

// loopScript makes a writer and a reviewer loop for ever: every document
// is rejected.
func loopScript() fakellm.Script {
	return fakellm.Script{Rules: []fakellm.Rule{
		{Name: "writer", Match: []string{"You are a writer"}, Answers: []string{"# Draft\n\nA draft that never pleases the reviewer."}},
		{Name: "reviewer", Match: []string{"You are a reviewer"}, Answers: []string{
			`{"verdict":"reject","severity":"Major","findings":["Try again."]}`}},
	}}
}

func loopConfig(llm, baseURL, orch, writerExtra string) string {
	env := `{OPENAI_BASE_URL: "` + baseURL + `/v1", OPENAI_API_KEY: sk-budget-key-01, LLM_MODEL: fake-gpt, LLM_TIMEOUT: 20s}`
	return `version: "1.0"
orchestrator:
  bid_timeout: 2s
  lease_ttl: 3s
  max_review_iterations: 0
` + orch + `
agents:
  writer: {command: ["` + llm + `", "--template", "writer"], bidding_strategy: exclusive, consumes: ["GoalDefined"], timeout: 30s, environment: ` + env + writerExtra + `}
  reviewer: {command: ["` + llm + `", "--template", "reviewer"], bidding_strategy: review, consumes: ["Document"], timeout: 30s, environment: ` + env + `}
`
}

// TestTokenBudgetStopsALoopingWorkflow: a writer whose every draft the
// reviewer rejects would loop for ever (max_review_iterations 0); the
// workflow's token budget stops it with a BudgetExceeded Failure, and the
// tokens counted per workflow and per agent add up to the usage the
// results report.
func TestTokenBudgetStopsALoopingWorkflow(t *testing.T) {
	t.Parallel()
	llm, _ := codingBinaries(t)
	srv := httptest.NewServer(fakellm.New(loopScript()))
	t.Cleanup(srv.Close)
	s := stacktest.New(t, loopConfig(llm, srv.URL, "  max_workflow_tokens: 3000", ""))
	s.Up("writer", "reviewer")
	wf := s.PostGoal("Write a short note about budgets.")
	w := s.WaitWorkflow(wf, wait)
	if w.Status != blackboard.WorkflowFailed || !strings.Contains(w.Outcome, "max_workflow_tokens (3000) exceeded") {
		t.Fatalf("workflow %s (%q), want failed by max_workflow_tokens", w.Status, w.Outcome)
	}
	arts := s.Artefacts(wf)
	if n := len(stacktest.OfType(arts, "BudgetExceeded")); n != 1 {
		t.Fatalf("%d BudgetExceeded Failures, want 1", n)
	}
	var sum int64
	byAgent := map[string]int64{}
	for _, a := range arts {
		n := blackboard.UsageTokens(a.Metadata)
		sum += n
		byAgent[a.ProducedByAgent] += n
	}
	if len(stacktest.OfType(arts, "Document")) < 2 {
		t.Errorf("the workflow stopped before it looped: %d documents", len(stacktest.OfType(arts, "Document")))
	}
	if w.Tokens != sum || w.Tokens <= 3000 {
		t.Errorf("workflow tokens %d, want the results' usage %d (over the budget 3000)", w.Tokens, sum)
	}
	if w.AgentTokens["writer"] != byAgent["writer"] || w.AgentTokens["reviewer"] != byAgent["reviewer"] || byAgent["writer"] == 0 {
		t.Errorf("workflow tokens by agent %v, want %v", w.AgentTokens, byAgent)
	}
	inst, err := s.BB.AgentTokens(t.Context())
	if err != nil || inst["writer"] != byAgent["writer"] || inst["reviewer"] != byAgent["reviewer"] {
		t.Errorf("instance tokens by agent %v (%v), want %v", inst, err, byAgent)
	}
	if tree := settCLI(t, s, "hoard", "--workflow", wf, "-o", "tree"); !strings.Contains(tree, "tokens ") {
		t.Errorf("hoard tree does not show the tokens:\n%s", tree)
	}
}

// TestTokensPerClaimFailPermanently: a run that reports more tokens than
// its agent's max_tokens_per_claim is a permanent failure: no retry, the
// workflow fails after one attempt.
func TestTokensPerClaimFailPermanently(t *testing.T) {
	t.Parallel()
	llm, _ := codingBinaries(t)
	srv := httptest.NewServer(fakellm.New(loopScript()))
	t.Cleanup(srv.Close)
	s := stacktest.New(t, loopConfig(llm, srv.URL, "", ", max_tokens_per_claim: 5, retry: {max_attempts: 3, backoff: [100ms]}"))
	s.Up("writer", "reviewer")
	wf := s.PostGoal("Write a short note about budgets.")
	w := s.WaitWorkflow(wf, wait)
	if w.Status != blackboard.WorkflowFailed || !strings.Contains(w.Outcome, "1 attempt(s)") {
		t.Fatalf("workflow %s (%q), want failed after one attempt", w.Status, w.Outcome)
	}
	fails := failuresOf(s.Artefacts(wf))
	if len(fails) != 1 || fails[0].Metadata["failure_kind"] != "token_budget" || fails[0].Metadata["retryable"] != "false" ||
		!strings.Contains(fails[0].Payload, "max_tokens_per_claim (5)") {
		t.Fatalf("failures %+v, want one permanent token_budget failure", fails)
	}
}

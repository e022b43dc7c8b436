package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/fakellm"
	"github.com/settdev/sett/internal/tool"
)

// llmAgent times the LLM agent's own overhead per call (agents/llm, the
// planner template) against the fake provider running in this process,
// so that every timestamp is on one monotonic clock: process start (the
// call of tool.Run, as the cub makes it) → the request arriving at the
// provider, and the provider's answer written → the tool's output read
// and the process gone. The model's own time is what a real provider adds
// on top.
func (r *runner) llmAgent(ctx context.Context) error {
	fs := fakellm.New(fakellm.DemoScript())
	srv := httptest.NewServer(fs)
	defer srv.Close()

	goal := blackboard.NewGoal("Add a /health endpoint", 0, "user", nil)
	stdin, err := json.Marshal(tool.Input{ClaimID: blackboard.NewID(), ClaimType: tool.ClaimTypeExclusive,
		TargetArtefact: tool.Artefact{ID: goal.ID, LogicalID: goal.ID, Version: 1, StructuralType: string(goal.StructuralType),
			Type: goal.Type, Payload: goal.Payload, ProducedByRole: "user", WorkflowID: goal.ID},
		Workflow: tool.Workflow{ID: goal.ID, Goal: goal.Payload},
		Memory:   tool.Memory{Learnings: "# Agent Memory\n\n## Patterns\n- Name the files a plan changes.", Handbook: "Be concise."},
		Instance: "bench", Agent: "planner"})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	spec := tool.Spec{Command: []string{r.bins.LLMAgent, "--template", "planner"}, Dir: r.workDir,
		Env: tool.ScrubbedEnv(os.Environ(), nil, map[string]string{"SETT_INSTANCE": "bench", "SETT_AGENT": "planner",
			"SETT_CLAIM_ID": "c", "SETT_WORKSPACE": r.workDir, "OPENAI_BASE_URL": srv.URL + "/v1",
			"OPENAI_API_KEY": "sk-bench", "LLM_MODEL": "fake-model"}),
		Stdin: stdin, Timeout: time.Minute}

	var toRequest, fromResponse, overhead []float64
	for i := 0; i < r.opts.HopWarmup+r.opts.LLMAgentSamples; i++ {
		start := time.Now()
		res := tool.Run(ctx, spec)
		end := start.Add(res.Duration)
		if res.Failure != "" {
			return fmt.Errorf("bench: the LLM agent failed: %s: %s\n%s", res.Failure, res.Detail, res.StderrTail)
		}
		if _, err := tool.ParseOutput(res.Stdout, tool.ClaimTypeExclusive, 1<<20); err != nil {
			return fmt.Errorf("bench: the LLM agent's output: %w", err)
		}
		recs := fs.Requests()
		if len(recs) != i+1 || recs[i].Status != 200 {
			return fmt.Errorf("bench: run %d made %d requests (want one more, answered 200)", i+1, len(recs)-i)
		}
		rec := recs[i]
		if i < r.opts.HopWarmup {
			continue
		}
		a, b := rec.ReceivedAt.Sub(start), end.Sub(rec.RespondedAt)
		toRequest, fromResponse = append(toRequest, ms(a)), append(fromResponse, ms(b))
		overhead = append(overhead, ms(a+b))
	}
	f := NewFigure("llm_agent_start_to_request", "LLM agent: process start → request at the provider", "ms", "calls", toRequest, "")
	f.Note = "sett-agent-llm (planner template, OpenAI SDK) run by internal/tool.Run as the cub runs it, against internal/fakellm in the harness process: " +
		"from the call of tool.Run to the request arriving (process start, SDK init, input read, template render, connect); informational"
	r.add(f)
	f = NewFigure("llm_agent_response_to_output", "LLM agent: answer written → output read, process gone", "ms", "calls", fromResponse, "")
	f.Note = "from the fake provider's answer written to tool.Run's return (answer parsed, output printed, process exit); informational"
	r.add(f)
	f = NewFigure("llm_agent_overhead", "LLM agent: its own time per call (both parts)", "ms", "calls", overhead, "")
	f.Note = "the sum of the two parts: what the agent adds to the model's time; informational"
	r.add(f)
	return nil
}

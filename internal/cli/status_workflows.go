package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/textcut"
)

// maxStatusWorkflows bounds the running workflows `sett status` lists.
const maxStatusWorkflows = 20

// runningWorkflow is one running workflow in `sett status`: its priority
// score and the model tokens it has spent.
type runningWorkflow struct {
	WorkflowID  string           `json:"workflow_id"`
	Goal        string           `json:"goal"`
	Score       int              `json:"score"`
	Tokens      int64            `json:"tokens"`
	AgentTokens map[string]int64 `json:"agent_tokens,omitempty"`
	StartedAtMs int64            `json:"started_at_ms"`
}

// tokenReport is the model tokens spent per agent across the instance.
type tokenReport struct {
	ByAgent map[string]int64 `json:"by_agent"`
	Total   int64            `json:"total"`
}

// collectRunning reads the running workflows (highest score first, at
// most maxStatusWorkflows) and the instance's tokens per agent.
func collectRunning(ctx context.Context, bb *blackboard.Client, running []string) ([]runningWorkflow, *tokenReport, error) {
	wfs, err := bb.GetWorkflows(ctx, running)
	if err != nil {
		return nil, nil, err
	}
	out := []runningWorkflow{}
	for _, w := range wfs {
		if w != nil {
			out = append(out, runningWorkflow{WorkflowID: w.ID, Goal: w.Goal, Score: w.Priority, Tokens: w.Tokens,
				AgentTokens: w.AgentTokens, StartedAtMs: w.StartedAtMs})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].StartedAtMs < out[j].StartedAtMs
	})
	if len(out) > maxStatusWorkflows {
		out = out[:maxStatusWorkflows]
	}
	byAgent, err := bb.AgentTokens(ctx)
	if err != nil {
		return nil, nil, err
	}
	tr := &tokenReport{ByAgent: byAgent}
	for _, n := range byAgent {
		tr.Total += n
	}
	return out, tr, nil
}

// agentTokensText renders tokens by agent: "planner 1200, coder 300".
func agentTokensText(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, m[n])
	}
	return strings.Join(parts, ", ")
}

// writeRunning prints the running workflows table of `sett status`.
func writeRunning(w io.Writer, style outputStyle, r *statusReport) {
	if len(r.Running) == 0 {
		return
	}
	fmt.Fprintln(w)
	t := newTable(w, style, "RUNNING WORKFLOW", "SCORE", "STARTED", "TOKENS", "GOAL")
	for _, wf := range r.Running {
		tokens := fmt.Sprint(wf.Tokens)
		if len(wf.AgentTokens) > 0 {
			tokens += " (" + agentTokensText(wf.AgentTokens) + ")"
		}
		t.row(cell{text: style.id(wf.WorkflowID)}, cell{text: fmt.Sprint(wf.Score)}, cell{text: stamp(style.Now(), msTime(wf.StartedAtMs))},
			cell{text: tokens}, cell{text: textcut.Runes(oneLine(wf.Goal), 50)})
	}
	_ = t.flush()
}

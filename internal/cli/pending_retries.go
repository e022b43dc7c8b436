package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
)

// pendingRetryView is one failed attempt whose retry waits for its
// backoff, as `sett status` and `sett queue` show it.
type pendingRetryView struct {
	ClaimID    string `json:"claim_id"`
	WorkflowID string `json:"workflow_id"`
	Agent      string `json:"agent"`
	// Attempt is the number of the coming attempt; MaxAttempts is 0 when
	// sett.yml could not say.
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts,omitempty"`
	DueAtMs     int64  `json:"due_at_ms"`
	FailureID   string `json:"failure_id"`
	Failure     string `json:"failure,omitempty"`
}

// text renders the retry: "coder: retry 2/5 in 57s: exit_nonzero: exit
// status 1: connection refused (claim 1a2b3c4d)".
func (r pendingRetryView) text(now time.Time) string {
	n := fmt.Sprint(r.Attempt)
	if r.MaxAttempts > 0 {
		n += fmt.Sprintf("/%d", r.MaxAttempts)
	}
	s := fmt.Sprintf("%s: retry %s in %s", r.Agent, n, humanDuration(max(msTime(r.DueAtMs).Sub(now), 0)))
	if r.Failure != "" {
		s += ": " + r.Failure
	}
	return s + fmt.Sprintf(" (claim %s)", blackboard.ShortID(r.ClaimID))
}

// collectPendingRetries lists the retries the claims wait for, soonest
// first, with the summary of the Failure each follows. maxAttempts gives
// an agent's attempts for a grant (0: unknown).
func collectPendingRetries(ctx context.Context, bb *blackboard.Client, claims []*blackboard.Claim, maxAttempts func(agent string, review bool) int) ([]pendingRetryView, error) {
	out := []pendingRetryView{}
	var failureIDs []string
	for _, c := range claims {
		if c == nil || c.Status.Final() {
			continue
		}
		for agent, rs := range c.Retries {
			if rs.Final || rs.FailureID == "" || rs.DueMs == 0 {
				continue
			}
			out = append(out, pendingRetryView{ClaimID: c.ID, WorkflowID: c.WorkflowID, Agent: agent, Attempt: rs.Failed + 1,
				MaxAttempts: maxAttempts(agent, c.GrantKind() == blackboard.GrantReview), DueAtMs: rs.DueMs, FailureID: rs.FailureID})
			failureIDs = append(failureIDs, rs.FailureID)
		}
	}
	if len(out) == 0 {
		return out, nil
	}
	failures, err := bb.GetArtefacts(ctx, failureIDs)
	if err != nil {
		return nil, err
	}
	summaries := map[string]string{}
	for _, f := range failures {
		if f != nil {
			summaries[f.ID] = f.Summary
		}
	}
	for i := range out {
		out[i].Failure = summaries[out[i].FailureID]
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].DueAtMs != out[j].DueAtMs {
			return out[i].DueAtMs < out[j].DueAtMs
		}
		return out[i].Agent < out[j].Agent
	})
	return out, nil
}

// configuredAttempts returns the attempts sett.yml in workspace gives
// each agent (0 for an agent or a file it cannot read).
func configuredAttempts(workspace string) func(agent string, review bool) int {
	path := filepath.Join(workspace, config.DefaultFilename)
	if _, err := os.Stat(path); err != nil {
		return func(string, bool) int { return 0 }
	}
	cfg, _, err := config.Load(path)
	if err != nil {
		return func(string, bool) int { return 0 }
	}
	return func(agent string, review bool) int {
		a, ok := cfg.Agent(agent)
		if !ok {
			return 0
		}
		return a.Retry.Policy(review).Attempts()
	}
}

package blackboard

import (
	"context"
	"encoding/json"
	"fmt"
)

// RetryResult says what RetryClaim did.
type RetryResult struct {
	// Status is the phase status the claim is back in.
	Status ClaimStatus `json:"status"`
	// Reopened is set when the claim's failed workflow runs again.
	Reopened bool `json:"reopened"`
	// Already is set when the claim had been retried before and is still
	// open: nothing was changed.
	Already bool `json:"already"`
}

// RetryClaim re-runs a claim that failed (its agents' retries exhausted,
// or a permanent failure) with a fresh attempt budget: in one script its
// workflow is reopened, the claim returns to the phase it failed in and
// each failed agent is due for a re-grant now; the orchestrator re-grants
// through the scheduler. by names who asked. Calling it again while the
// claim is open changes nothing (Already). Errors: ErrNotFound,
// ErrNotFailed (the claim did not fail, wrapped with why),
// ErrWorkflowEnded (cancelled or completed meanwhile).
func (c *Client) RetryClaim(ctx context.Context, claimID, by string) (RetryResult, error) {
	if err := ValidateID(claimID); err != nil {
		return RetryResult{}, err
	}
	cl, err := c.GetClaim(ctx, claimID)
	if err != nil {
		return RetryResult{}, err
	}
	req, _ := json.Marshal(map[string]string{ // plain strings always marshal
		"id": claimID, "workflow_id": cl.WorkflowID, "by": by,
		"claim_channel": c.keys.ClaimEvents(), "workflow_channel": c.keys.WorkflowEvents(),
	})
	keys := []string{c.keys.Claim(claimID), c.keys.Workflow(cl.WorkflowID), c.keys.Outputs(claimID),
		c.keys.Failures(claimID), c.keys.ActiveClaims(), c.keys.Timers(), c.keys.Events(), c.keys.OrchestratorQueue()}
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.retryClaim, keys, string(req))
	if err != nil {
		return RetryResult{}, err
	}
	switch res[0] {
	case "OK":
		return RetryResult{Status: ClaimStatus(res[1]), Reopened: len(res) > 2 && res[2] == "1"}, nil
	case "ALREADY":
		return RetryResult{Status: ClaimStatus(res[1]), Already: true}, nil
	case "NOT_FAILED":
		why := ""
		if len(res) > 2 {
			why = res[2]
		}
		return RetryResult{}, fmt.Errorf("%w: claim %s: %s", ErrNotFailed, claimID, why)
	}
	return RetryResult{}, scriptError("retry_claim", res)
}

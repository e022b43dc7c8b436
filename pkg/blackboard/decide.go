package blackboard

import (
	"context"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
)

// PendingApprovals lists the artefact versions waiting for a human
// decision, oldest request first.
func (c *Client) PendingApprovals(ctx context.Context) ([]ApprovalRequest, error) {
	return c.bb.PendingApprovals(ctx)
}

// ApprovalOf returns the approval request of an artefact version.
// Errors: ErrNotFound when it does not wait for a decision.
func (c *Client) ApprovalOf(ctx context.Context, artefactID string) (*ApprovalRequest, error) {
	return c.bb.ApprovalOf(ctx, artefactID)
}

// Approve approves the artefact version artefactID (an ApprovalRequest's
// ArtefactID); by names who decided. The orchestrator applies the
// decision: the claim goes on to its reviews or work. The decision is
// recorded with channel "api" (`sett approve` records "cli", the console
// "console"), so the audit trail says a program made it.
//
// Errors: ErrSuperseded (a *SupersededError naming the current version),
// ErrAlreadyDecided, ErrApprovalExpired, ErrStaleStatus (its claim does
// not wait for a decision), ErrWorkflowEnded, ErrNotFound (no such
// artefact, or no claim for it yet).
func (c *Client) Approve(ctx context.Context, artefactID, by string) error {
	return c.decide(ctx, artefactID, blackboard.ApprovalApproved, by, "")
}

// Reject rejects the artefact version artefactID with a reason, which
// its author gets as feedback and which becomes a learning; what happens
// next (rework or the workflow's end) is the instance's
// approvals.on_reject. The reason is required: ErrInvalid without one.
// Other errors as Approve's.
func (c *Client) Reject(ctx context.Context, artefactID, by, reason string) error {
	return c.decide(ctx, artefactID, blackboard.ApprovalRejected, by, reason)
}

// decide records a decision made through this API.
func (c *Client) decide(ctx context.Context, artefactID string, d blackboard.ApprovalDecision, by, reason string) error {
	return c.bb.DecideApproval(ctx, blackboard.Decision{
		ArtefactID: artefactID, Decision: d, By: by, Channel: blackboard.ChannelAPI, Reason: reason,
	})
}

// CancelWorkflow ends a running workflow as cancelled, as `sett cancel`
// does: its open claims end and the tools running for it are stopped;
// its artefacts stay. The outcome reads "cancelled by <by>: <reason>"
// (either part left out when empty). It returns false, and no error,
// when the workflow had already ended. Errors: ErrNotFound.
func (c *Client) CancelWorkflow(ctx context.Context, workflowID, by, reason string) (bool, error) {
	why := "cancelled"
	if by = strings.TrimSpace(by); by != "" {
		why += " by " + by
	}
	if reason = strings.TrimSpace(reason); reason != "" {
		why += ": " + reason
	}
	return c.bb.EndWorkflow(ctx, workflowID, blackboard.WorkflowCancelled, why, blackboard.OperatorEpoch)
}

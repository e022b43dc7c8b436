package blackboard

import (
	"context"
	"fmt"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/connect"
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
	return c.decide(ctx, blackboard.Decision{ArtefactID: artefactID, Decision: blackboard.ApprovalApproved, By: by})
}

// Reject rejects the artefact version artefactID with a reason, which
// its author gets as feedback and which becomes a learning; what happens
// next (rework or the workflow's end) is the instance's
// approvals.on_reject. The reason is required: ErrInvalid without one
// (RejectWithoutReason leaves it to a learner agent). Other errors as
// Approve's.
func (c *Client) Reject(ctx context.Context, artefactID, by, reason string) error {
	return c.decide(ctx, blackboard.Decision{ArtefactID: artefactID, Decision: blackboard.ApprovalRejected, By: by, Reason: reason})
}

// RejectWithoutReason rejects the artefact version artefactID and leaves
// the why to the instance's learner agent (orchestrator.learner), which
// works the learning out from the artefact and its goal: what `sett
// reject ID` without --reason does, and moving a plan to the vault's
// Rejected/ folder alone. What happens next is approvals.on_reject, as
// for Reject; a rework gets no feedback beyond the rejection.
//
// The rule is `sett reject`'s: the reason may be left out only when the
// sett.yml of the workspace names a learner. The workspace is the one
// DialEnv resolved from; a Client from Dial or DialConn reads no
// sett.yml, so it is always refused. A refusal is ErrInvalid, saying
// why (no workspace, no learner, or a sett.yml that cannot be read), and
// records nothing.
//
// It is a method of its own rather than Reject with an empty reason, so
// that a reason lost on its way to Reject is still refused instead of
// taken for a choice. Other errors as Approve's.
func (c *Client) RejectWithoutReason(ctx context.Context, artefactID, by string) error {
	learner, why := c.learner()
	if blackboard.RejectionNeedsReason(blackboard.ApprovalRejected, "", learner) {
		return fmt.Errorf("%w: a rejection needs a reason (it is the feedback the author gets and what Sett learns from) "+
			"unless sett.yml names a learner (orchestrator.learner), and %s: give one with Reject", ErrInvalid, why)
	}
	return c.decide(ctx, blackboard.Decision{ArtefactID: artefactID, Decision: blackboard.ApprovalRejected, By: by, ReasonOptional: true})
}

// learner reports whether the Client's workspace names a learner, and
// otherwise why not.
func (c *Client) learner() (bool, string) {
	if c.workspace == "" {
		return false, "this Client reads no sett.yml (DialEnv reads the workspace's; Dial and DialConn do not)"
	}
	ok, err := connect.LearnerConfigured(c.workspace)
	switch {
	case err != nil:
		return false, err.Error()
	case !ok:
		return false, fmt.Sprintf("the workspace %s has no sett.yml that does", c.workspace)
	}
	return true, ""
}

// decide records a decision made through this API (channel "api").
func (c *Client) decide(ctx context.Context, d blackboard.Decision) error {
	d.Channel = blackboard.ChannelAPI
	return c.bb.DecideApproval(ctx, d)
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

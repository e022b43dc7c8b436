package blackboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxDecisionReasonBytes bounds the reason a human gives with a decision.
const MaxDecisionReasonBytes = 16 << 10

// ApprovalRequest is a claim waiting in pending_approval, with what a
// human needs to decide it.
type ApprovalRequest struct {
	ClaimID         string
	ArtefactID      string
	LogicalID       string
	WorkflowID      string
	Version         int
	ArtefactType    string
	ProducedByRole  string
	ProducedByAgent string
	Summary         string
	RequestedAtMs   int64
	// ExpiresAtMs is 0 when the approval never expires.
	ExpiresAtMs int64
}

// Decision is a human's answer to an approval request.
type Decision struct {
	// ArtefactID is the exact version the human was shown; a decision on
	// a superseded version is refused.
	ArtefactID string
	Decision   ApprovalDecision
	// By names who decided ("" when unknown).
	By      string
	Channel DecisionChannel
	// Reason is required for a rejection unless ReasonOptional: it
	// becomes the feedback and the learning.
	Reason string
	// ReasonOptional lets a rejection come without a reason: set it when
	// orchestrator.learner names an agent, which works out the learning
	// from the rejected artefact and its task (seed 000: reject by moving
	// the file alone).
	ReasonOptional bool
}

// RejectionNeedsReason decides whether a decision lacks the reason it
// needs: a rejection with an empty reason, unless a learner will work it
// out (reasonOptional).
func RejectionNeedsReason(decision ApprovalDecision, reason string, reasonOptional bool) bool {
	return decision == ApprovalRejected && strings.TrimSpace(reason) == "" && !reasonOptional
}

// PendingApprovals lists the claims waiting for a human decision, oldest
// request first, with their artefacts, in two round trips.
func (c *Client) PendingApprovals(ctx context.Context) ([]ApprovalRequest, error) {
	octx, cancel := c.op(ctx)
	ids, err := c.rdb.ZRange(octx, c.keys.ApprovalIndex(), 0, -1).Result()
	cancel()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read approvals index: %w", err)
	}
	claims, err := c.GetClaims(ctx, ids)
	if err != nil {
		return nil, err
	}
	var artIDs []string
	var waiting []*Claim
	for _, cl := range claims {
		// The index and the status change in one script; a claim that is
		// gone or moved on is skipped rather than trusted.
		if cl == nil || cl.Status != ClaimPendingApproval {
			continue
		}
		waiting = append(waiting, cl)
		artIDs = append(artIDs, cl.ArtefactID)
	}
	arts, err := c.GetArtefacts(ctx, artIDs)
	if err != nil {
		return nil, err
	}
	out := make([]ApprovalRequest, 0, len(waiting))
	for i, cl := range waiting {
		a := arts[i]
		if a == nil {
			continue
		}
		out = append(out, approvalRequest(cl, a))
	}
	return out, nil
}

// CountApprovals returns how many claims wait for a human decision.
func (c *Client) CountApprovals(ctx context.Context) (int64, error) {
	octx, cancel := c.op(ctx)
	defer cancel()
	n, err := c.rdb.ZCard(octx, c.keys.ApprovalIndex()).Result()
	if err != nil {
		return 0, fmt.Errorf("blackboard: count approvals: %w", err)
	}
	return n, nil
}

// ApprovalOf returns the approval request of the claim of an artefact
// version. Errors: ErrNotFound when the artefact has no claim waiting
// for approval.
func (c *Client) ApprovalOf(ctx context.Context, artefactID string) (*ApprovalRequest, error) {
	a, err := c.GetArtefact(ctx, artefactID)
	if err != nil {
		return nil, err
	}
	cl, err := c.GetClaim(ctx, DeriveID("claim", artefactID))
	if err != nil {
		return nil, err
	}
	if cl.Status != ClaimPendingApproval {
		return nil, fmt.Errorf("%w: artefact %s has no pending approval (its claim is %s)", ErrNotFound, artefactID, cl.Status)
	}
	r := approvalRequest(cl, a)
	return &r, nil
}

func approvalRequest(cl *Claim, a *Artefact) ApprovalRequest {
	return ApprovalRequest{
		ClaimID: cl.ID, ArtefactID: a.ID, LogicalID: a.LogicalID, WorkflowID: cl.WorkflowID,
		Version: a.Version, ArtefactType: a.Type, ProducedByRole: a.ProducedByRole,
		ProducedByAgent: a.ProducedByAgent, Summary: a.Summary,
		RequestedAtMs: cl.Approval.RequestedAtMs, ExpiresAtMs: cl.Approval.ExpiresAtMs,
	}
}

// DecideApproval records a human decision on the claim of d.ArtefactID
// and queues it for the orchestrator, which applies it (writes the human
// Review artefact, grants or reworks or ends the workflow). The decision
// is bound to the exact version shown.
//
// Errors: ErrInvalid (bad decision, channel, or a rejection without a
// reason), ErrNotFound (the artefact or its claim does not exist),
// *SupersededError (ErrSuperseded: a newer version is current),
// ErrAlreadyDecided, ErrApprovalExpired, ErrStaleStatus (the claim does
// not wait for approval).
func (c *Client) DecideApproval(ctx context.Context, d Decision) error {
	if err := ValidateID(d.ArtefactID); err != nil {
		return err
	}
	if !d.Decision.Valid() {
		return fmt.Errorf("%w: decision %q is not one of %v", ErrInvalid, d.Decision, AllApprovalDecisions())
	}
	if !d.Channel.Valid() {
		return fmt.Errorf("%w: decision channel %q is not one of %v", ErrInvalid, d.Channel, AllDecisionChannels())
	}
	d.Reason = strings.TrimSpace(d.Reason)
	d.By = strings.TrimSpace(d.By)
	if RejectionNeedsReason(d.Decision, d.Reason, d.ReasonOptional) {
		return fmt.Errorf("%w: a rejection needs a reason (it is the feedback the author gets and what Sett learns from)", ErrInvalid)
	}
	if len(d.Reason) > MaxDecisionReasonBytes || !utf8.ValidString(d.Reason) {
		return fmt.Errorf("%w: the reason must be UTF-8 text of at most %d bytes", ErrInvalid, MaxDecisionReasonBytes)
	}
	if len(d.By) > 200 || !utf8.ValidString(d.By) {
		return fmt.Errorf("%w: the decider's name must be UTF-8 text of at most 200 bytes", ErrInvalid)
	}
	a, err := c.GetArtefact(ctx, d.ArtefactID)
	if err != nil {
		return err
	}
	claimID := DeriveID("claim", a.ID)
	body, _ := json.Marshal(map[string]string{
		"claim_id": claimID, "artefact_id": a.ID, "decision": string(d.Decision), "by": d.By,
		"channel": string(d.Channel), "reason": d.Reason, "claim_channel": c.keys.ClaimEvents(),
	})
	octx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(octx, c.scripts.decideApproval,
		[]string{c.keys.Claim(claimID), c.keys.Thread(a.LogicalID), c.keys.Events(), c.keys.OrchestratorQueue()},
		string(body))
	if err != nil {
		return err
	}
	switch res[0] {
	case "OK":
		return nil
	case "SUPERSEDED":
		se := &SupersededError{ArtefactID: a.ID}
		if len(res) > 2 {
			se.CurrentID = res[1]
			se.CurrentVersion, _ = strconv.Atoi(res[2])
		}
		return se
	case "NOT_FOUND":
		return fmt.Errorf("%w: artefact %s (%s v%d) has no claim yet: it is not waiting for approval", ErrNotFound, a.ID, a.Type, a.Version)
	case "EXPIRED":
		return fmt.Errorf("%w (%w): artefact %s (%s v%d): the approval timed out before this decision",
			ErrApprovalExpired, ErrStaleStatus, a.ID, a.Type, a.Version)
	case "STALE_STATUS":
		return fmt.Errorf("%w: artefact %s (%s v%d) is not waiting for approval (its claim is %s)",
			ErrStaleStatus, a.ID, a.Type, a.Version, strings.Join(res[1:], " "))
	}
	return fmt.Errorf("artefact %s (%s v%d): %w", a.ID, a.Type, a.Version, scriptError("decide_approval", res))
}

// IsDecisionRefusal reports whether err says a decision could not apply
// (superseded, decided, expired, not pending) rather than that Redis
// failed.
func IsDecisionRefusal(err error) bool {
	for _, e := range []error{ErrSuperseded, ErrAlreadyDecided, ErrApprovalExpired, ErrStaleStatus, ErrNotFound, ErrInvalid} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

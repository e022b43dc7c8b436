package blackboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
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
// A late decision is accepted (decisionRule): one that comes after the
// approval's timeout, before or after the orchestrator ended the claim
// for human review. In the second case the claim goes back to
// pending_approval with the decision and its failed workflow runs again
// (a workflow_reopened event), so the work resumes where it stopped.
//
// Errors: ErrInvalid (bad decision, channel, or a rejection without a
// reason), ErrNotFound (the artefact or its claim does not exist),
// *SupersededError (ErrSuperseded: a newer version is current),
// ErrAlreadyDecided, ErrStaleStatus (the claim does not wait for
// approval and did not time out waiting), ErrWorkflowEnded (its workflow
// was cancelled or ended otherwise).
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
	_, err := c.applyDecision(ctx, d)
	return err
}

// ReaskApproval puts an approval that timed out (its claim ended for
// human review) back in front of people: the claim waits in
// pending_approval again, with no timeout, and its failed workflow runs
// again. It reports whether the workflow was reopened. Errors as
// DecideApproval; ErrAlreadyDecided when the approval was decided.
func (c *Client) ReaskApproval(ctx context.Context, artefactID, by string) (bool, error) {
	if err := ValidateID(artefactID); err != nil {
		return false, err
	}
	return c.applyDecision(ctx, Decision{ArtefactID: artefactID, By: strings.TrimSpace(by)})
}

// decisionState is what decisionRule decides on: a read of the claim and
// its workflow.
type decisionState struct {
	ClaimStatus ClaimStatus
	// TerminatedFrom is the status the claim ended from ("" unless it
	// ended).
	TerminatedFrom ClaimStatus
	Decided        bool
	// ExpiresAtMs is the approval's timeout (0: none); EndedAtMs when the
	// claim last changed (for an ended claim: when it ended).
	ExpiresAtMs, EndedAtMs int64
	Workflow               WorkflowStatus
}

// decisionVerdict is what a decision does to a claim.
type decisionVerdict string

const (
	// verdictDecide: the claim waits for approval; the decision is
	// recorded (even past the timeout: the orchestrator has not ended it).
	verdictDecide decisionVerdict = "decide"
	// verdictReopen: the approval timed out and ended the claim; the
	// decision reopens the claim and its workflow.
	verdictReopen decisionVerdict = "reopen"
	// verdictAlready: decided before (decisions are not changed).
	verdictAlready decisionVerdict = "already"
	// verdictEnded: the workflow ended otherwise (cancelled, completed):
	// nothing to resume.
	verdictEnded decisionVerdict = "ended"
	// verdictStale: the claim is past its approval for another reason.
	verdictStale decisionVerdict = "stale"
)

// decisionRule decides whether a human decision applies to a claim: a
// waiting claim takes it (late or not); a claim its approval timeout
// ended (terminated from pending_approval at or after the expiry, its
// workflow failed by that or still running) is reopened with it, so a
// late decision resumes the work; anything else refuses it.
func decisionRule(s decisionState) decisionVerdict {
	switch {
	case s.Decided:
		return verdictAlready
	case s.ClaimStatus == ClaimPendingApproval:
		return verdictDecide
	case s.ClaimStatus != ClaimTerminated || s.TerminatedFrom != ClaimPendingApproval:
		return verdictStale
	case s.ExpiresAtMs <= 0 || s.EndedAtMs < s.ExpiresAtMs:
		// Ended while waiting, but not by its timeout (its workflow
		// failed or was cancelled around it).
		return verdictStale
	case s.Workflow != WorkflowFailed && s.Workflow != WorkflowRunning:
		return verdictEnded
	}
	return verdictReopen
}

// applyDecision reads the claim, applies decisionRule and writes the
// verdict with a compare-and-set on the claim's rev (read again when the
// claim changed meanwhile). d.Decision "" asks again (ReaskApproval).
func (c *Client) applyDecision(ctx context.Context, d Decision) (bool, error) {
	a, err := c.GetArtefact(ctx, d.ArtefactID)
	if err != nil {
		return false, err
	}
	claimID := DeriveID("claim", a.ID)
	for attempt := 0; ; attempt++ {
		octx, cancel := c.op(ctx)
		pipe := c.rdb.Pipeline()
		hm := pipe.HMGet(octx, c.keys.Claim(claimID), "status", "terminated_from", "approval_decision",
			"approval_by", "approval_expires_at_ms", "updated_at_ms", "rev", "workflow_id")
		headCmd := pipe.ZRevRangeWithScores(octx, c.keys.Thread(a.LogicalID), 0, 0)
		_, err := pipe.Exec(octx)
		cancel()
		if err != nil && !errors.Is(err, redis.Nil) {
			return false, fmt.Errorf("blackboard: read claim %s: %w", claimID, err)
		}
		raw := hm.Val()
		if head := headCmd.Val(); len(head) > 0 {
			if id, _ := head[0].Member.(string); id != "" && id != a.ID {
				// A newer version is current: that is what the person must
				// hear first (the old one may be decided or ended).
				return false, &SupersededError{ArtefactID: a.ID, CurrentID: id, CurrentVersion: int(head[0].Score)}
			}
		}
		str := func(i int) string { s, _ := raw[i].(string); return s }
		num := func(i int) int64 { n, _ := strconv.ParseInt(str(i), 10, 64); return n }
		if str(0) == "" {
			return false, fmt.Errorf("%w: artefact %s (%s v%d) has no claim yet: it is not waiting for approval", ErrNotFound, a.ID, a.Type, a.Version)
		}
		wfID := str(7)
		octx, cancel = c.op(ctx)
		wfStatus, err := c.rdb.HGet(octx, c.keys.Workflow(wfID), "status").Result()
		cancel()
		if err != nil && !errors.Is(err, redis.Nil) {
			return false, fmt.Errorf("blackboard: read workflow %s: %w", wfID, err)
		}
		st := decisionState{ClaimStatus: ClaimStatus(str(0)), TerminatedFrom: ClaimStatus(str(1)), Decided: str(2) != "",
			ExpiresAtMs: num(4), EndedAtMs: num(5), Workflow: WorkflowStatus(wfStatus)}
		verdict := decisionRule(st)
		if d.Decision == "" && verdict == verdictDecide {
			return false, nil // waits for a decision already
		}
		switch verdict {
		case verdictAlready:
			return false, fmt.Errorf("%w: artefact %s (%s v%d) was %s by %s", ErrAlreadyDecided, a.ID, a.Type, a.Version, str(2), orUnknown(str(3)))
		case verdictEnded:
			return false, fmt.Errorf("%w: artefact %s (%s v%d): its workflow %s is %s; nothing waits for this decision",
				ErrWorkflowEnded, a.ID, a.Type, a.Version, wfID, wfStatus)
		case verdictStale:
			return false, fmt.Errorf("%w: artefact %s (%s v%d) is not waiting for approval (its claim is %s)",
				ErrStaleStatus, a.ID, a.Type, a.Version, st.ClaimStatus)
		}
		body, _ := json.Marshal(map[string]string{
			"claim_id": claimID, "artefact_id": a.ID, "decision": string(d.Decision), "by": d.By,
			"channel": string(d.Channel), "reason": d.Reason, "claim_channel": c.keys.ClaimEvents(),
			"workflow_channel": c.keys.WorkflowEvents(), "mode": string(verdict), "rev": strconv.FormatInt(num(6), 10),
		})
		octx, cancel = c.op(ctx)
		res, err := c.run(octx, c.scripts.decideApproval,
			[]string{c.keys.Claim(claimID), c.keys.Thread(a.LogicalID), c.keys.Events(), c.keys.OrchestratorQueue(),
				c.keys.Workflow(wfID), c.keys.ActiveClaims(), c.keys.Timers(), c.keys.ApprovalIndex()},
			string(body))
		cancel()
		if err != nil {
			return false, err
		}
		switch res[0] {
		case "OK":
			return len(res) > 2 && res[2] == "1", nil
		case "CHANGED":
			if attempt < 5 {
				continue // the orchestrator moved the claim meanwhile: decide on what it is now
			}
			return false, fmt.Errorf("%w: artefact %s (%s v%d): its claim keeps changing; try again", ErrStaleStatus, a.ID, a.Type, a.Version)
		case "SUPERSEDED":
			se := &SupersededError{ArtefactID: a.ID}
			if len(res) > 2 {
				se.CurrentID = res[1]
				se.CurrentVersion, _ = strconv.Atoi(res[2])
			}
			return false, se
		case "NOT_FOUND":
			return false, fmt.Errorf("%w: artefact %s (%s v%d) has no claim yet: it is not waiting for approval", ErrNotFound, a.ID, a.Type, a.Version)
		case "WORKFLOW_ENDED":
			return false, fmt.Errorf("%w: artefact %s (%s v%d): its workflow is %s", ErrWorkflowEnded, a.ID, a.Type, a.Version, strings.Join(res[1:], " "))
		}
		return false, fmt.Errorf("artefact %s (%s v%d): %w", a.ID, a.Type, a.Version, scriptError("decide_approval", res))
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "someone"
	}
	return s
}

// IsDecisionRefusal reports whether err says a decision could not apply
// (superseded, decided, expired, not pending) rather than that Redis
// failed.
func IsDecisionRefusal(err error) bool {
	for _, e := range []error{ErrSuperseded, ErrAlreadyDecided, ErrApprovalExpired, ErrStaleStatus, ErrNotFound, ErrInvalid, ErrWorkflowEnded} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/failpoint"
	"github.com/settdev/sett/internal/textcut"
)

// Type of the Review artefact that records a human decision.
const HumanReviewType = "HumanReview"

// approval handles a claim in pending_approval: it applies a
// recorded human decision, expires an approval nobody decided in time,
// or waits (the claim's timer fires at the expiry).
//
// Crash safety: the human Review artefact and the learn claim have ids
// derived from the claim, so a retry after a crash finds them written
// (ErrExists) and goes on to the final compare-and-set of the claim; the
// decision itself is stored on the claim by the decide script, so it is
// never lost between the human and this step.
func (a *ClaimAdvancer) approval(ctx context.Context, st *blackboard.ClaimState) error {
	cl := st.Claim
	switch cl.Approval.Decision {
	case blackboard.ApprovalApproved:
		return a.approved(ctx, st)
	case blackboard.ApprovalRejected:
		return a.rejected(ctx, st)
	}
	if exp := cl.Approval.ExpiresAtMs; exp > 0 && st.NowMs >= exp {
		return a.approvalExpired(ctx, st)
	}
	return nil
}

// approved records the human's approval and starts consensus as a claim
// created now would: with the plan of the agents alive now, the bids
// their rules decide (the ignores, and unless claims.AskRuleBids the
// claim and exclusive bids) recorded in the same step with a bids_decided
// event, and bid requests to the other live consumers only.
func (a *ClaimAdvancer) approved(ctx context.Context, st *blackboard.ClaimState) error {
	cl := st.Claim
	target, err := a.bb.GetArtefact(ctx, cl.ArtefactID)
	if err != nil {
		return err
	}
	if _, err := a.writeHumanReview(ctx, cl, target); err != nil {
		return err
	}
	failpoint.Hit("approval-review-written")
	cached := a.plans.get(target.Type, target.ProducedByRole)
	plan := cached.plan
	t := blackboard.Transition{
		ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status, Rev: cl.Rev, To: blackboard.ClaimPendingConsensus,
		Set:  blackboard.ClaimPatch{ExpectedBidders: plan.Bidders, AbsentConsumers: plan.Absent},
		Bids: cached.bids,
		Inbox: plan.requests(cl.ID, cl.WorkflowID, bidTarget{ID: target.ID, Type: target.Type,
			StructuralType: target.StructuralType, ProducedByRole: target.ProducedByRole}),
		BidTimeout: a.claims.BidTimeout,
		Events: append(cached.event(cl.ID, target.ID, cl.WorkflowID), a.event(blackboard.EventApprovalApplied, cl, "", map[string]string{
			"decision": string(blackboard.ApprovalApproved), "by": cl.Approval.By, "channel": string(cl.Approval.Channel),
		})),
	}
	if _, err := a.transition(ctx, t); err != nil {
		return err
	}
	a.TimerArmedFunc(a.claims.BidTimeout)
	a.m.ApprovalsDecided.WithLabelValues(string(blackboard.ApprovalApproved)).Inc()
	a.log.Info().Str("claim_id", cl.ID).Str("workflow_id", cl.WorkflowID).Str("by", cl.Approval.By).
		Str("channel", string(cl.Approval.Channel)).Strs("bidders", plan.Bidders).Int("bids_decided", len(cached.bids)).
		Msg("approved; consensus started")
	if len(plan.Bidders) == 0 {
		// Nobody is asked, so no bid will ever wake this claim: consensus
		// decides now, on the decided bids (a grant, a dead end, or
		// waiting for absent consumers).
		return a.Advance(ctx, cl.ID, cl.WorkflowID, false)
	}
	return nil
}

// rejected records the human's rejection, starts the learning, and then
// ends the claim (on_reject: end) or sends the artefact back to its
// producer with the reason as feedback (on_reject: rework).
func (a *ClaimAdvancer) rejected(ctx context.Context, st *blackboard.ClaimState) error {
	cl := st.Claim
	target, err := a.bb.GetArtefact(ctx, cl.ArtefactID)
	if err != nil {
		return err
	}
	review, err := a.writeHumanReview(ctx, cl, target)
	if err != nil {
		return err
	}
	if err := a.startLearning(ctx, cl, target, review); err != nil {
		return err
	}
	a.m.ApprovalsDecided.WithLabelValues(string(blackboard.ApprovalRejected)).Inc()
	if a.claims.Approvals.OnReject == config.OnRejectRework {
		return a.rework(ctx, st, target, []*blackboard.Artefact{review}, "")
	}
	who := cl.Approval.By
	if who == "" {
		who = "a human"
	}
	why := cl.Approval.Reason
	if why == "" {
		// Rejected by a move alone: the learner works out why.
		why = "no reason given"
	}
	reason := fmt.Sprintf("Rejected by %s (%s): %s", who, cl.Approval.Channel, why)
	end := blackboard.Transition{WorkflowStatus: blackboard.WorkflowRejected}
	return a.finish(ctx, st, end, blackboard.ClaimTerminated, reason, true,
		fmt.Sprintf("%s v%d rejected by %s: %s", target.Type, target.Version, who, why),
		a.event(blackboard.EventClaimTerminatedRejected, cl, "", map[string]string{
			"reason": reason, "review_id": review.ID, "by": cl.Approval.By, "channel": string(cl.Approval.Channel),
		}))
}

// approvalExpired ends a claim nobody decided in time; the workflow fails
// with the reason (and the vault moves the item to Needs_Human_Review/).
func (a *ClaimAdvancer) approvalExpired(ctx context.Context, st *blackboard.ClaimState) error {
	cl := st.Claim
	waited := msDuration(cl.Approval.ExpiresAtMs - cl.Approval.RequestedAtMs)
	reason := fmt.Sprintf("Terminated: nobody approved or rejected it within %s (approvals.timeout); needs human review.", waited)
	err := a.finish(ctx, st, blackboard.Transition{}, blackboard.ClaimTerminated, reason, true,
		fmt.Sprintf("approval of %s timed out after %s", blackboard.ShortID(cl.ArtefactID), waited),
		a.event(blackboard.EventApprovalExpired, cl, "", map[string]string{
			"reason": reason, "expires_at_ms": strconv.FormatInt(cl.Approval.ExpiresAtMs, 10),
		}))
	if err == nil {
		a.m.ApprovalsDecided.WithLabelValues("expired").Inc()
	}
	return err
}

// writeHumanReview records the decision as a Review artefact by "human"
// (who, when, which channel), once: its id derives from the
// claim. A rejection's payload is the reason, so that a rework's
// feedback[] carries it as any reviewer's text; an approval's is the
// structured approve verdict.
func (a *ClaimAdvancer) writeHumanReview(ctx context.Context, cl *blackboard.Claim, target *blackboard.Artefact) (*blackboard.Artefact, error) {
	ap := cl.Approval
	id := blackboard.DeriveID("human-review", cl.ID)
	who := ap.By
	if who == "" {
		who = "a human"
	}
	r := &blackboard.Artefact{
		ID: id, LogicalID: id, Version: 1,
		StructuralType:  blackboard.StructuralReview,
		Type:            HumanReviewType,
		SourceArtefacts: []string{target.ID},
		ProducedByRole:  "human",
		WorkflowID:      cl.WorkflowID,
		ClaimID:         cl.ID,
		Depth:           target.Depth + 1,
		Metadata: map[string]string{
			"decision": string(ap.Decision), "decided_by": ap.By, "channel": string(ap.Channel),
			"decided_at_ms":  strconv.FormatInt(ap.DecidedAtMs, 10),
			"target_version": strconv.Itoa(target.Version),
		},
	}
	if ap.Decision == blackboard.ApprovalApproved {
		r.Payload = `{"verdict":"approve"}`
		r.Summary = fmt.Sprintf("approved by %s (%s)", who, ap.Channel)
	} else {
		r.Payload = ap.Reason
		r.Summary = textcut.Bytes(fmt.Sprintf("rejected by %s (%s): %s", who, ap.Channel, oneLine(ap.Reason)), 200)
	}
	err := a.bb.CreateArtefact(ctx, r, blackboard.WriteAuth{Epoch: a.epoch()})
	if err != nil && !errors.Is(err, blackboard.ErrExists) {
		return nil, err
	}
	return r, nil
}

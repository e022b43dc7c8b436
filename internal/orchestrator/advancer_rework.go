package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/failpoint"
	"github.com/settdev/sett/internal/reviewpolicy"
)

// Failure artefact types the orchestrator writes.
const (
	FailureMaxIterations = "MaxIterationsExceeded"
	FailureMissingAgent  = "MissingAgentConfiguration"
	FailureBudget        = "BudgetExceeded"
)

// rework handles a review phase with at least one rejection: it hands the target back to its producer with every rejecting review
// in one feedback claim, or ends the claim with a Failure when the
// iteration limit is reached or no agent can do the rework.
//
// Crash safety: the feedback claim and Failure artefacts have ids derived
// from the rejected claim, so a retry after a crash at any point finds them
// already written (ErrExists) and goes on to the final compare-and-set of
// the original claim. Exactly one feedback claim can ever exist per
// rejected claim.
//
// decision is the review policy's decision that led here (recorded on the
// claim), extra the events to record with the step.
func (a *ClaimAdvancer) rework(ctx context.Context, st *blackboard.ClaimState, target *blackboard.Artefact, rejections []*blackboard.Artefact, decision string, extra ...blackboard.Event) error {
	cl := st.Claim
	reviewIDs := make([]string, len(rejections))
	events := make([]blackboard.Event, 0, len(rejections)+len(extra)+2)
	events = append(events, extra...)
	for i, r := range rejections {
		reviewIDs[i] = r.ID
		m, _ := agentMemory(r)
		v := reviewpolicy.Judge(r.Payload, m)
		events = append(events, a.event(blackboard.EventReviewRejected, cl, r.ProducedByAgent, map[string]string{
			"review_id": r.ID, "severity": v.Severity, "verdict_reason": v.Reason,
			"target_version": strconv.Itoa(target.Version),
		}))
		a.log.Info().Str("claim_id", cl.ID).Str("workflow_id", cl.WorkflowID).Str("agent", r.ProducedByAgent).
			Str("review_id", r.ID).Str("event", string(blackboard.EventReviewRejected)).Msg("review rejected")
	}
	iteration := target.Version - 1
	// Issue 28: a review cluster may set its own revision limit.
	limit := a.cfg.ReviewClusters.For(target.Type).RevisionLimit(a.cfg.MaxReviewIterations)

	if limit > 0 && iteration >= limit {
		payload := fmt.Sprintf("Max review iterations (%d) reached for artefact %s (%s, version %d, thread %s). "+
			"The last rejecting reviews were: %s.", limit, target.ID, target.Type, target.Version, target.LogicalID,
			strings.Join(reviewIDs, ", "))
		failure, err := a.writeFailure(ctx, cl, target, FailureMaxIterations, payload,
			fmt.Sprintf("max review iterations (%d) reached for %s v%d", limit, target.Type, target.Version))
		if err != nil {
			return err
		}
		reason := fmt.Sprintf("Terminated after reaching max review iterations (%d).", limit)
		events = append(events, a.event(blackboard.EventClaimTerminatedMaxIterations, cl, "", map[string]string{
			"reason": reason, "failure_id": failure, "iterations": strconv.Itoa(iteration), "limit": strconv.Itoa(limit),
		}))
		return a.finish(ctx, st, blackboard.Transition{Set: blackboard.ClaimPatch{ReviewDecision: decision}}, blackboard.ClaimTerminated, reason, true,
			fmt.Sprintf("%s %s was still rejected after %d review iterations", target.Type, blackboard.ShortID(target.LogicalID), limit), events...)
	}

	// Issue 28: the rework goes to the agent that produced the version;
	// another agent of its role only when that one is gone (and the
	// feedback_claim_created event says so).
	producer, fellBack, ok := a.dir.ReworkerFor(target.ProducedByAgent, target.ProducedByRole)
	if !ok {
		payload := fmt.Sprintf("Cannot rework artefact %s (%s, version %d): no agent with role %q is configured in sett.yml. "+
			"Add an agent with that role and post the goal again.", target.ID, target.Type, target.Version, target.ProducedByRole)
		failure, err := a.writeFailure(ctx, cl, target, FailureMissingAgent, payload,
			fmt.Sprintf("no agent configured for role %s", target.ProducedByRole))
		if err != nil {
			return err
		}
		reason := fmt.Sprintf("Terminated due to missing agent configuration (role: %s).", target.ProducedByRole)
		events = append(events, a.event(blackboard.EventClaimTerminatedMissingAgent, cl, "", map[string]string{
			"reason": reason, "failure_id": failure, "role": target.ProducedByRole,
		}))
		return a.finish(ctx, st, blackboard.Transition{}, blackboard.ClaimTerminated, reason, true,
			fmt.Sprintf("no agent is configured for role %s to rework %s", target.ProducedByRole, blackboard.ShortID(target.ID)), events...)
	}

	feedbackID := blackboard.DeriveID("feedback-claim", cl.ID)
	created, err := a.createReworkClaim(ctx, &blackboard.Claim{
		ID: feedbackID, ArtefactID: target.ID, WorkflowID: cl.WorkflowID,
		Status:                blackboard.ClaimPendingAssignment,
		GrantedExclusiveAgent: producer,
		AdditionalContextIDs:  reviewIDs,
		ParentClaimID:         cl.ID,
		Iteration:             iteration + 1,
		Attempts:              1,
	}, producer, reworkFields(map[string]string{
		"iteration": strconv.Itoa(iteration + 1), "parent_claim_id": cl.ID,
		"review_ids": strings.Join(reviewIDs, ","), "target_version": strconv.Itoa(target.Version),
	}, target, producer, fellBack))
	if err != nil {
		return err
	}
	if created {
		a.log.Info().Str("claim_id", feedbackID).Str("parent_claim_id", cl.ID).Str("agent", producer).
			Int("iteration", iteration+1).Str("event", string(blackboard.EventFeedbackClaimCreated)).Msg("feedback claim created")
	}
	failpoint.Hit("feedback-claim-created")
	reason := fmt.Sprintf("Terminated due to negative review feedback. See artefacts: [%s]", strings.Join(reviewIDs, ", "))
	t := blackboard.Transition{Set: blackboard.ClaimPatch{FeedbackClaimID: feedbackID, ReviewDecision: decision}}
	// The feedback claim already holds the workflow's open item for this
	// work (AddsItem), so closing ours cannot end the workflow early.
	return a.finish(ctx, st, t, blackboard.ClaimTerminated, reason, false, "", events...)
}

// writeFailure records an orchestrator Failure about target for claim cl,
// once: its id derives from the claim and the failure type.
func (a *ClaimAdvancer) writeFailure(ctx context.Context, cl *blackboard.Claim, target *blackboard.Artefact, typ, payload, summary string) (string, error) {
	id := blackboard.DeriveID("failure", cl.ID, typ)
	f := &blackboard.Artefact{
		ID: id, LogicalID: id, Version: 1,
		StructuralType:  blackboard.StructuralFailure,
		Type:            typ,
		Payload:         payload,
		SourceArtefacts: []string{target.ID},
		ProducedByRole:  "orchestrator",
		WorkflowID:      cl.WorkflowID,
		ClaimID:         cl.ID,
		Summary:         summary,
		Depth:           target.Depth + 1,
	}
	err := a.bb.CreateArtefact(ctx, f, blackboard.WriteAuth{Epoch: a.epoch()})
	if err != nil && !errors.Is(err, blackboard.ErrExists) {
		return "", err
	}
	return id, nil
}

// reworkFields adds, when the rework does not go to the version's
// producer, who produced it and why another agent reworks it.
func reworkFields(f map[string]string, target *blackboard.Artefact, agent string, fellBack bool) map[string]string {
	if fellBack {
		f["produced_by_agent"] = target.ProducedByAgent
		f["reworker_reason"] = fmt.Sprintf("%s, which produced v%d, is gone; %s of role %s reworks it", orNone(target.ProducedByAgent), target.Version, agent, target.ProducedByRole)
	}
	return f
}

func orNone(s string) string {
	if s == "" {
		return "no recorded agent"
	}
	return s
}

// createReworkClaim creates the feedback claim c, granted to producer at
// once (the rework of c.ArtefactID), with its feedback_claim_created
// event carrying fields; created is false when it existed already (made
// before a crash, or by an earlier delivery of the same event).
func (a *ClaimAdvancer) createReworkClaim(ctx context.Context, c *blackboard.Claim, producer string, fields map[string]string) (created bool, err error) {
	_, err = a.bb.CreateClaim(ctx, blackboard.NewClaim{
		Claim:    c,
		AddsItem: true,
		Counts:   true,
		TimerIn:  a.claims.LeaseTTL + leaseMargin,
		Grants:   map[string]string{producer: "1"},
		Inbox: []blackboard.InboxMessage{a.grantMessage(&blackboard.Claim{ID: c.ID, ArtefactID: c.ArtefactID, WorkflowID: c.WorkflowID},
			producer, blackboard.GrantFeedback, "1")},
		Events: []blackboard.Event{{
			Type: blackboard.EventFeedbackClaimCreated, WorkflowID: c.WorkflowID, ClaimID: c.ID,
			ArtefactID: c.ArtefactID, Agent: producer, Fields: fields,
		}},
		Epoch: a.epoch(),
	})
	switch {
	case err == nil:
		a.m.ClaimsCreated.Inc()
		a.m.FeedbackIterations.Inc()
		a.m.Grants.WithLabelValues("feedback").Inc()
		a.TimerArmedFunc(a.claims.LeaseTTL + leaseMargin)
		return true, nil
	case errors.Is(err, blackboard.ErrExists):
		return false, nil
	}
	return false, err
}

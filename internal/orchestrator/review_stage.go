package orchestrator

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// skippedGrant is the grant token of a reviewer whose grant was withdrawn
// (an advisory reviewer past its deadline): a result it still delivers is
// refused as a stale grant, and the phase no longer waits for it.
const skippedGrant = "skipped"

// reviewSkipped reports whether agent's review grant on the claim was
// withdrawn.
func reviewSkipped(st *blackboard.ClaimState, agent string) bool {
	return st.Claim.Status == blackboard.ClaimPendingReview && st.Grants[agent] == skippedGrant
}

// advisoryWaitOf applies overdueAdvisory to a review phase's missing
// reviewers; it reads the grants' delivery times only when every missing
// reviewer is advisory.
func (a *ClaimAdvancer) advisoryWaitOf(ctx context.Context, st *blackboard.ClaimState, missing []string) (advisoryWait, error) {
	deadlines := map[string]time.Duration{}
	for _, agent := range missing {
		d := a.cfg.advisoryDeadline(agent)
		if d <= 0 {
			return advisoryWait{}, nil // a non-advisory review is awaited
		}
		deadlines[agent] = d
	}
	live, err := a.bb.GetClaimState(ctx, st.Claim.ID, st.Claim.WorkflowID, missing)
	if err != nil {
		return advisoryWait{}, err
	}
	if live.Claim.Rev != st.Claim.Rev {
		return advisoryWait{}, errMovedOn
	}
	return overdueAdvisory(missing, deadlines, live.DeliveredAtMs, st.Claim.UpdatedAtMs, live.NowMs), nil
}

// skipAdvisory withdraws the grants of advisory reviewers past their
// deadline (their tools are stopped, a late result is refused) and
// records a review_skipped event for each; the phase then decides
// without them.
func (a *ClaimAdvancer) skipAdvisory(ctx context.Context, st *blackboard.ClaimState, agents []string) error {
	cl := st.Claim
	t := blackboard.Transition{
		ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status, Rev: cl.Rev, To: cl.Status,
		Grants: map[string]string{}, Release: agents,
	}
	for _, agent := range agents {
		t.Grants[agent] = skippedGrant
		d := a.cfg.advisoryDeadline(agent)
		t.Events = append(t.Events, a.event(blackboard.EventReviewSkipped, cl, agent, map[string]string{
			"reason": "advisory_deadline", "deadline_ms": itoa64(d.Milliseconds()),
			"note": "advisory reviewer " + agent + " did not answer within its deadline of " + d.String() + "; the review phase decides without it",
		}))
	}
	if _, err := a.transition(ctx, t); err != nil {
		return err
	}
	a.log.Warn().Str("claim_id", cl.ID).Str("workflow_id", cl.WorkflowID).Strs("agents", agents).
		Str("event", string(blackboard.EventReviewSkipped)).Msg("advisory reviewers past their deadline; deciding without them")
	return a.advanceRead(ctx, cl.ID, cl.WorkflowID, false, nil)
}

// reviewBidders are the agents that bid review on the claim.
func reviewBidders(bids map[string]blackboard.Bid) []string {
	var out []string
	for agent, b := range bids {
		if b == blackboard.BidReview {
			out = append(out, agent)
		}
	}
	return out
}

// askAgainAfterError grants reviewers that answered ERROR once more; the
// ERROR reviews stay in the trail, listed in their retry state.
func (a *ClaimAdvancer) askAgainAfterError(ctx context.Context, b *phaseBoundary, agents []string) error {
	st := b.st
	cl := st.Claim
	retries := make(map[string]blackboard.RetryState, len(cl.Retries)+len(agents))
	for k, v := range cl.Retries {
		retries[k] = v
	}
	t := blackboard.Transition{
		ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status, Rev: cl.Rev, To: cl.Status,
		Grants: map[string]string{}, ClearOutputs: agents, Gate: a.gate(),
		ArmTimer: true, TimerIn: a.claims.LeaseTTL + leaseMargin,
	}
	for _, agent := range agents {
		out := b.outputs[agent]
		rs := retries[agent]
		rs.ErrorAnswers = append(rs.ErrorAnswers, out.ID)
		retries[agent] = rs
		token := strconv.Itoa(atoiOr(st.Grants[agent], 0) + 1)
		t.Grants[agent] = token
		msg := a.grantMessage(cl, agent, blackboard.GrantReview, token)
		msg.Attempt = rs.Failed + len(rs.ErrorAnswers) + 1
		msg.MaxAttempts = max(msg.MaxAttempts, msg.Attempt)
		t.Inbox = append(t.Inbox, msg)
		t.Events = append(t.Events, a.event(blackboard.EventRetryGranted, cl, agent, map[string]string{
			"attempt": strconv.Itoa(msg.Attempt), "max_attempts": strconv.Itoa(msg.MaxAttempts),
			"cause": "answered_error", "review_id": out.ID,
		}))
	}
	t.Set.Retries = retries
	if _, err := a.transition(ctx, t); err != nil {
		return err
	}
	a.m.Retries.WithLabelValues("granted").Add(float64(len(agents)))
	a.log.Info().Str("claim_id", cl.ID).Str("workflow_id", cl.WorkflowID).Strs("agents", agents).
		Str("event", string(blackboard.EventRetryGranted)).Msg("reviewers answered ERROR; asking them once more")
	return nil
}

// grantAfterGate grants the reviewers held back while the gate reviewers
// reviewed (every gate passed).
func (a *ClaimAdvancer) grantAfterGate(ctx context.Context, b *phaseBoundary, rest []string) error {
	st := b.st
	cl := st.Claim
	granted := append(append([]string(nil), cl.GrantedReviewAgents...), rest...)
	t := blackboard.Transition{
		ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status, Rev: cl.Rev, To: cl.Status,
		Set:    blackboard.ClaimPatch{GrantedReviewAgents: granted},
		Grants: map[string]string{}, Gate: a.gate(),
		ArmTimer: true, TimerIn: a.claims.LeaseTTL + leaseMargin,
		Events: []blackboard.Event{a.event(blackboard.EventClaimGranted, cl, "", map[string]string{
			"phase": phaseInfo[phaseReview].name, "agents": strings.Join(rest, ","),
			"after_gate": strings.Join(cl.GrantedReviewAgents, ","),
		})},
	}
	for _, agent := range rest {
		t.Grants[agent] = "1"
		t.Inbox = append(t.Inbox, a.grantMessage(cl, agent, blackboard.GrantReview, "1"))
	}
	if _, err := a.transition(ctx, t); err != nil {
		return err
	}
	a.m.Grants.WithLabelValues(phaseInfo[phaseReview].name).Add(float64(len(rest)))
	a.log.Info().Str("claim_id", cl.ID).Str("workflow_id", cl.WorkflowID).Strs("agents", rest).
		Strs("after_gate", cl.GrantedReviewAgents).Msg("gate reviewers passed; granting the other reviewers")
	return nil
}

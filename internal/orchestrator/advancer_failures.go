package orchestrator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/retrypolicy"
)

// Retries. When a granted agent delivers a Failure, its retry
// policy decides: a transient failure with attempts left is retried after
// a backoff, a permanent one or the last attempt's ends the claim and
// escalates the workflow. The decision is stored on the claim (its retry
// state) and the backoff is the claim's durable timer, so a restart at
// any point neither loses nor doubles a retry: the re-grant is a
// compare-and-set on the claim, and it clears the failed output in the
// same step. Every attempt's Failure artefact stays in the audit trail.

// jitter is the random source for backoff jitter; a *rand.Rand is not safe
// for concurrent use.
type jitter struct {
	mu  sync.Mutex
	rnd *rand.Rand
}

func newJitter() *jitter {
	return &jitter{rnd: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0x5e77))}
}

func (j *jitter) next(p retrypolicy.Policy, attempt int, f retrypolicy.FailureFacts) retrypolicy.Retry {
	j.mu.Lock()
	defer j.mu.Unlock()
	return p.Next(attempt, f, j.rnd)
}

// failures handles the phase's agents whose outputs are Failures. It
// stores every retry decision (a backoff, a due re-grant, a reviewer out
// of attempts, whose review then counts as failed) and reports progressed
// when it changed the claim; it returns the non-reviewers whose failures
// are final (retries exhausted, or permanent), which end the claim.
func (a *ClaimAdvancer) failures(ctx context.Context, st *blackboard.ClaimState, failed []string) (exhausted []string, arts []*blackboard.Artefact, progressed bool, err error) {
	cl := st.Claim
	var pending []string
	for _, agent := range failed {
		if !cl.Retries[agent].Final {
			pending = append(pending, agent)
		}
	}
	if len(pending) == 0 {
		return nil, nil, false, nil
	}
	ids := make([]string, len(pending))
	for i, agent := range pending {
		ids[i] = st.Outputs[agent]
	}
	found, err := a.bb.GetArtefacts(ctx, ids)
	if err != nil {
		return nil, nil, false, err
	}
	retries := make(map[string]blackboard.RetryState, len(cl.Retries)+len(pending))
	for k, v := range cl.Retries {
		retries[k] = v
	}
	kind := cl.GrantKind()
	review := kind == blackboard.GrantReview
	t := blackboard.Transition{
		ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status, Rev: cl.Rev, To: cl.Status,
		Grants: map[string]string{}, Gate: a.gate(),
	}
	changed := false
	next := time.Duration(-1)
	for i, agent := range pending {
		f := found[i]
		if f == nil {
			return nil, nil, false, fmt.Errorf("orchestrator: claim %s: failure %s of %s does not exist", cl.ID, ids[i], agent)
		}
		policy := a.claims.retryPolicy(agent, kind)
		rs := retries[agent]
		if rs.FailureID == f.ID {
			// Decided before: re-grant once the backoff is over.
			if rs.DueMs > st.NowMs {
				next = minPositive(next, time.Duration(rs.DueMs-st.NowMs)*time.Millisecond)
				continue
			}
			token := strconv.Itoa(atoiOr(st.Grants[agent], 0) + 1)
			attempt := rs.Failed + 1
			t.ClearOutputs = append(t.ClearOutputs, agent)
			t.Grants[agent] = token
			msg := a.grantMessage(cl, agent, kind, token)
			msg.Attempt, msg.MaxAttempts = attempt, policy.Attempts()
			t.Inbox = append(t.Inbox, msg)
			rs.DueMs, rs.FailureID = 0, ""
			retries[agent] = rs
			t.Events = append(t.Events, a.event(blackboard.EventRetryGranted, cl, agent, map[string]string{
				"attempt": strconv.Itoa(attempt), "max_attempts": strconv.Itoa(policy.Attempts()),
			}))
			a.m.Retries.WithLabelValues("granted").Inc()
			next = minPositive(next, a.claims.LeaseTTL+leaseMargin)
			changed = true
			continue
		}
		rs.Failed++
		rs.Failures = append(rs.Failures, f.ID)
		decision := a.jitter.next(policy, rs.Failed, failureFacts(f))
		if review && a.cfg.ReviewRoles[agent].Advisory {
			// An advisory reviewer's failure is ignored: nobody waits for
			// a retry of it.
			decision = retrypolicy.Retry{Reason: "advisory reviewer: its failure is ignored"}
		}
		if !decision.Again {
			outcome := "exhausted"
			if rs.Failed < policy.Attempts() {
				outcome = "permanent"
			}
			a.m.Retries.WithLabelValues(outcome).Inc()
			a.log.Warn().Str("claim_id", cl.ID).Str("agent", agent).Str("failure_id", f.ID).Str("why", decision.Reason).
				Msg("no retry")
			if review {
				// The review counts as failed; the review policy decides
				// what that means for the phase.
				rs.Final, rs.DueMs, rs.FailureID = true, 0, f.ID
				retries[agent] = rs
				changed = true
				continue
			}
			exhausted = append(exhausted, agent)
			arts = append(arts, f)
			continue
		}
		rs.DueMs, rs.FailureID = st.NowMs+decision.Delay.Milliseconds(), f.ID
		retries[agent] = rs
		t.Events = append(t.Events, a.event(blackboard.EventRetryScheduled, cl, agent, map[string]string{
			"attempt": strconv.Itoa(rs.Failed), "max_attempts": strconv.Itoa(policy.Attempts()),
			"delay_ms": strconv.FormatInt(decision.Delay.Milliseconds(), 10), "failure_id": f.ID, "reason": decision.Reason,
		}))
		a.m.Retries.WithLabelValues("scheduled").Inc()
		a.log.Info().Str("claim_id", cl.ID).Str("agent", agent).Str("failure_id", f.ID).Dur("delay", decision.Delay).
			Str("event", string(blackboard.EventRetryScheduled)).Msg(decision.Reason)
		next = minPositive(next, decision.Delay)
		changed = true
	}
	if len(exhausted) > 0 {
		return exhausted, arts, false, nil
	}
	if !changed {
		if next >= 0 {
			return nil, nil, false, a.rearm(ctx, cl, next)
		}
		return nil, nil, false, nil
	}
	t.Set.Retries = retries
	if next >= 0 {
		t.ArmTimer, t.TimerIn = true, next
	}
	if len(t.Grants) == 0 {
		t.Gate = nil // only a re-grant is subject to the scheduler
	}
	if _, err := a.transition(ctx, t); err != nil {
		return nil, nil, false, err
	}
	return nil, nil, true, nil
}

// escalate ends the claim because agents' failures are final (retries
// exhausted or permanent): the workflow fails, workflow_escalated is
// recorded and queued for the escalation hook.
func (a *ClaimAdvancer) escalate(ctx context.Context, st *blackboard.ClaimState, agents []string, failures []*blackboard.Artefact) error {
	cl := st.Claim
	var ids, why, short []string
	for i, f := range failures {
		rs := cl.Retries[agents[i]]
		// Every attempt's Failure, the last one (not yet in the state) too.
		ids = append(ids, rs.Failures...)
		ids = append(ids, f.ID)
		why = append(why, fmt.Sprintf("%s failed %d time(s), last: %s", agents[i], rs.Failed+1, f.Summary))
		short = append(short, fmt.Sprintf("agent %s failed (%d attempt(s)): %s", agents[i], rs.Failed+1, f.Summary))
	}
	reason := fmt.Sprintf("Terminated due to agent failure (%s). See Failure artefacts: [%s]", strings.Join(why, "; "), strings.Join(ids, ", "))
	fields := map[string]string{
		"reason": reason, "agents": strings.Join(agents, ","), "failure_ids": strings.Join(ids, ","),
	}
	last := failures[len(failures)-1].ID
	esc := a.event(blackboard.EventWorkflowEscalated, cl, agents[0], fields)
	t := blackboard.Transition{Queue: []blackboard.Event{esc}}
	return a.finish(ctx, st, t, blackboard.ClaimTerminated, reason, true, strings.Join(short, "; "),
		a.event(blackboard.EventClaimTerminatedAgentFailure, cl, agents[0], map[string]string{
			"reason": reason, "failure_id": last, "failure_type": failures[0].Type,
		}), esc)
}

// failureFacts reads what the retry policy needs from a Failure artefact
// the cub wrote (its metadata); a Failure the orchestrator or an older cub
// wrote lacks them and counts as a transient non-zero exit.
func failureFacts(f *blackboard.Artefact) retrypolicy.FailureFacts {
	facts := retrypolicy.FailureFacts{Kind: retrypolicy.FailureKind(f.Metadata["failure_kind"]), ExitCode: -1}
	if facts.Kind == "" {
		facts.Kind = "exit_nonzero"
	}
	if s := f.Metadata["exit_code"]; s != "" {
		facts.ExitCode = atoiOr(s, -1)
	}
	if s := f.Metadata["retryable"]; s != "" {
		b := s == "true"
		facts.Retryable = &b
	}
	return facts
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

package orchestrator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/settdev/sett/internal/retrypolicy"
	"github.com/settdev/sett/pkg/blackboard"
)

// Retries (SPEC §8). When a granted agent delivers a Failure, its retry
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

// failures handles the phase's agents whose outputs are Failures; it
// returns the agents whose retries are exhausted (or whose failure is
// permanent), after storing every decision about the others.
func (a *ClaimAdvancer) failures(ctx context.Context, st *blackboard.ClaimState, failed []string) ([]string, []*blackboard.Artefact, error) {
	cl := st.Claim
	ids := make([]string, len(failed))
	for i, agent := range failed {
		ids[i] = st.Outputs[agent]
	}
	arts, err := a.bb.GetArtefacts(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	retries := make(map[string]blackboard.RetryState, len(cl.Retries)+len(failed))
	for k, v := range cl.Retries {
		retries[k] = v
	}
	kind := cl.GrantKind()
	t := blackboard.Transition{
		ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status, Rev: cl.Rev, To: cl.Status,
		Grants: map[string]string{}, Gate: a.gate(),
	}
	changed := false
	next := time.Duration(-1)
	var exhausted []string
	var exhaustedArts []*blackboard.Artefact
	for i, agent := range failed {
		f := arts[i]
		if f == nil {
			return nil, nil, fmt.Errorf("orchestrator: claim %s: failure %s of %s does not exist", cl.ID, ids[i], agent)
		}
		policy := a.set.retryPolicy(agent, kind)
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
			next = minPositive(next, a.set.LeaseTTL+leaseMargin)
			changed = true
			continue
		}
		rs.Failed++
		rs.Failures = append(rs.Failures, f.ID)
		decision := a.jitter.next(policy, rs.Failed, failureFacts(f))
		if !decision.Again {
			exhausted = append(exhausted, agent)
			exhaustedArts = append(exhaustedArts, f)
			outcome := "exhausted"
			if rs.Failed < policy.Attempts() {
				outcome = "permanent"
			}
			a.m.Retries.WithLabelValues(outcome).Inc()
			a.log.Warn().Str("claim_id", cl.ID).Str("agent", agent).Str("failure_id", f.ID).Str("why", decision.Reason).
				Msg("no retry")
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
	if len(exhausted) > 0 || !changed {
		if !changed && next >= 0 && len(exhausted) == 0 {
			return nil, nil, a.rearm(ctx, cl, next)
		}
		return exhausted, exhaustedArts, nil
	}
	t.Set.Retries = retries
	if next >= 0 {
		t.ArmTimer, t.TimerIn = true, next
	}
	if len(t.Grants) == 0 {
		t.Gate = nil // only a re-grant is subject to the scheduler
	}
	return nil, nil, a.transition(ctx, t)
}

// escalate ends the claim because agents' failures are final (retries
// exhausted or permanent): the workflow fails, workflow_escalated is
// recorded and queued for the escalation hook.
func (a *ClaimAdvancer) escalate(ctx context.Context, st *blackboard.ClaimState, agents []string, failures []*blackboard.Artefact) error {
	cl := st.Claim
	var ids, why []string
	for i, f := range failures {
		rs := cl.Retries[agents[i]]
		// Every attempt's Failure, the last one (not yet in the state) too.
		ids = append(ids, rs.Failures...)
		ids = append(ids, f.ID)
		why = append(why, fmt.Sprintf("%s failed %d time(s), last: %s", agents[i], rs.Failed+1, f.Summary))
	}
	reason := fmt.Sprintf("Terminated due to agent failure (%s). See Failure artefacts: [%s]", strings.Join(why, "; "), strings.Join(ids, ", "))
	fields := map[string]string{
		"reason": reason, "agents": strings.Join(agents, ","), "failure_ids": strings.Join(ids, ","),
	}
	last := failures[len(failures)-1].ID
	esc := a.event(blackboard.EventWorkflowEscalated, cl, agents[0], fields)
	t := blackboard.Transition{Queue: []blackboard.Event{esc}}
	return a.finishWith(ctx, st, t, blackboard.ClaimTerminated, reason, true,
		fmt.Sprintf("escalated: %s", strings.Join(why, "; ")),
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

package blackboard

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// GrantPlan is what the bid script needs to grant a claim itself when the
// last expected bid arrives (the orchestrator's read-decide-grant
// round leaves the hot path). The orchestrator writes it with the claim,
// under its epoch; the script grants only while that epoch is still the
// stored one and nothing calls for the orchestrator's judgement (pause,
// a contested max_concurrent_claims slot, a passed bid deadline, a dead
// end...). Otherwise the claim goes to the orchestrator as without a plan,
// so the plan is an optimisation, never a source of truth.
type GrantPlan struct {
	// MaxConcurrentClaims is orchestrator.max_concurrent_claims (0: no
	// limit). With a limit the script grants only while a slot is free
	// and no other claim waits for one, leaving the ordering to the
	// orchestrator's scheduler.
	MaxConcurrentClaims int
	// LeaseCheck is when, after the grant, the claim's timer fires to look
	// for lost work leases (the orchestrator's lease TTL plus its margin).
	LeaseCheck time.Duration
	// MaxAttempts gives, per expected bidder and grant kind (review,
	// claim, exclusive), the attempts its retry policy allows; a grant
	// message carries it.
	MaxAttempts map[string]map[GrantKind]int
}

// encode renders the plan as the claim's grant_plan field, adding what
// only the client knows (each agent's channel) and the epoch.
func (p *GrantPlan) encode(k Keys, epoch int64) (string, error) {
	if epoch <= 0 {
		return "", fmt.Errorf("%w: grant plan: a plan needs the leader epoch it was made under", ErrInvalid)
	}
	if p.MaxConcurrentClaims < 0 || p.LeaseCheck <= 0 {
		return "", fmt.Errorf("%w: grant plan: max_concurrent_claims %d and lease check %v must be >= 0 and > 0",
			ErrInvalid, p.MaxConcurrentClaims, p.LeaseCheck)
	}
	agents := make(map[string]map[string]string, len(p.MaxAttempts))
	for agent, kinds := range p.MaxAttempts {
		if err := ValidateAgentName(agent); err != nil {
			return "", err
		}
		a := map[string]string{"channel": k.AgentEvents(agent)}
		for _, kind := range []GrantKind{GrantReview, GrantClaim, GrantExclusive} {
			n := kinds[kind]
			if n < 1 {
				n = 1
			}
			a[string(kind)] = strconv.Itoa(n)
		}
		agents[agent] = a
	}
	b, err := json.Marshal(map[string]any{
		"epoch":    strconv.FormatInt(epoch, 10),
		"limit":    p.MaxConcurrentClaims,
		"timer_ms": p.LeaseCheck.Milliseconds(),
		"agents":   agents,
	})
	if err != nil {
		return "", fmt.Errorf("blackboard: encode grant plan: %w", err)
	}
	return string(b), nil
}

package blackboard

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// GrantPlan is what the bid script needs to grant a claim itself when the
// last expected bid arrives (the orchestrator's read-decide-grant
// round leaves the hot path). The orchestrator decides the grant in
// advance, with its own consensus rules, from the bids its configuration
// predicts (Expect), and writes it with the claim under its epoch. The
// script holds no rule of its own: it checks that the bids are exactly
// the predicted ones and that nothing calls for the orchestrator's
// judgement (pause, a contested max_concurrent_claims slot, a passed bid
// deadline, another epoch...), and writes the decided grant. Otherwise
// the claim goes to the orchestrator as without a plan, so the plan is an
// optimisation, never a source of truth.
type GrantPlan struct {
	// MaxConcurrentClaims is orchestrator.max_concurrent_claims (0: no
	// limit). With a limit the script grants only while a slot is free
	// and no other claim waits for one, leaving the ordering to the
	// orchestrator's scheduler.
	MaxConcurrentClaims int
	// LeaseCheck is when, after the grant, the claim's timer fires to look
	// for lost work leases (the orchestrator's lease TTL plus its margin).
	LeaseCheck time.Duration
	// Expect is every expected bidder's bid as the orchestrator predicts
	// it; the script grants only when the stored bids are exactly these.
	Expect map[string]Bid
	// Agent is the one agent the decided grant goes to (a cub may write
	// only its own agent's keys, so only its own bid can grant), Phase
	// the phase's name for the claim_granted event, Kind the grant kind
	// and MaxAttempts the attempts its retry policy allows for it.
	Agent       string
	Phase       string
	Kind        GrantKind
	MaxAttempts int
}

// grantStatus is the claim status each grant kind moves a claim to, and
// the claim field that names its agents.
var grantStatus = map[GrantKind]struct {
	status ClaimStatus
	field  string
	list   bool
}{
	GrantReview:    {ClaimPendingReview, "granted_review_agents", true},
	GrantClaim:     {ClaimPendingParallel, "granted_parallel_agents", true},
	GrantExclusive: {ClaimPendingExclusive, "granted_exclusive_agent", false},
}

// encode renders the plan as the claim's grant_plan field, adding what
// only the client knows (the agent's channel, the claim fields the grant
// writes) and the epoch.
func (p *GrantPlan) encode(k Keys, epoch int64) (string, error) {
	if epoch <= 0 {
		return "", fmt.Errorf("%w: grant plan: a plan needs the leader epoch it was made under", ErrInvalid)
	}
	if p.MaxConcurrentClaims < 0 || p.LeaseCheck <= 0 {
		return "", fmt.Errorf("%w: grant plan: max_concurrent_claims %d and lease check %v must be >= 0 and > 0",
			ErrInvalid, p.MaxConcurrentClaims, p.LeaseCheck)
	}
	if err := ValidateAgentName(p.Agent); err != nil {
		return "", err
	}
	g, ok := grantStatus[p.Kind]
	if !ok || p.Phase == "" {
		return "", fmt.Errorf("%w: grant plan: grant kind %q, phase %q", ErrInvalid, p.Kind, p.Phase)
	}
	if _, ok := p.Expect[p.Agent]; !ok {
		return "", fmt.Errorf("%w: grant plan: %s is not among the expected bidders", ErrInvalid, p.Agent)
	}
	expect := make(map[string]string, len(p.Expect))
	for agent, b := range p.Expect {
		if err := ValidateAgentName(agent); err != nil {
			return "", err
		}
		if !b.Valid() {
			return "", fmt.Errorf("%w: grant plan: bid %q of %s", ErrInvalid, b, agent)
		}
		expect[agent] = string(b)
	}
	named := p.Agent
	if g.list {
		b, _ := json.Marshal([]string{p.Agent}) // a []string always marshals
		named = string(b)
	}
	attempts := p.MaxAttempts
	if attempts < 1 {
		attempts = 1
	}
	b, err := json.Marshal(map[string]any{
		"epoch":        strconv.FormatInt(epoch, 10),
		"limit":        p.MaxConcurrentClaims,
		"timer_ms":     p.LeaseCheck.Milliseconds(),
		"expect":       expect,
		"agent":        p.Agent,
		"channel":      k.AgentEvents(p.Agent),
		"status":       string(g.status),
		"field":        g.field,
		"named":        named,
		"grant":        string(p.Kind),
		"phase":        p.Phase,
		"max_attempts": strconv.Itoa(attempts),
	})
	if err != nil {
		return "", fmt.Errorf("blackboard: encode grant plan: %w", err)
	}
	return string(b), nil
}

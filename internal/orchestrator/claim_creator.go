package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/failpoint"
)

// ClaimCreator gives every claimable artefact its one claim and asks the
// live agents to bid on it, in a single script call (one round trip on the
// hot path). Budgets are checked by the same script.
//
// Safe for concurrent use.
type ClaimCreator struct {
	bb       *blackboard.Client
	cfg      CreatorConfig
	claims   ClaimConfig
	dir      *AgentDirectory
	advancer *ClaimAdvancer
	epoch    func() int64
	m        *Metrics
	log      zerolog.Logger
	// plans is the advancer's: an approved claim starts consensus with
	// the plan a claim created now would have.
	plans *planCache
}

// CreatorParams is what NewClaimCreator wires together.
type CreatorParams struct {
	Client *blackboard.Client
	Config CreatorConfig
	// Claims must be the advancer's: the creator writes the claims the
	// advancer goes on with.
	Claims ClaimConfig
	// Directory answers which agents are live.
	Directory *AgentDirectory
	// Advancer takes the claims nobody is asked to bid on, and holds the
	// bid plans both start consensus with.
	Advancer *ClaimAdvancer
	// Epoch reports the leader epoch every write is made under.
	Epoch   func() int64
	Metrics *Metrics
	// Log has no component; the creator adds its own.
	Log zerolog.Logger
}

// NewClaimCreator returns a creator that hands claims nobody is asked to
// bid on straight to p.Advancer.
func NewClaimCreator(p CreatorParams) *ClaimCreator {
	return &ClaimCreator{bb: p.Client, cfg: p.Config, claims: p.Claims, dir: p.Directory, advancer: p.Advancer, epoch: p.Epoch, m: p.Metrics,
		log:   p.Log.With().Str("component", "claim_creator").Logger(),
		plans: p.Advancer.plans}
}

// OnArtefact creates the claim for the artefact an artefact_created event
// announces. Repeats return the existing claim and change nothing.
func (c *ClaimCreator) OnArtefact(ctx context.Context, ev blackboard.Event) error {
	if !blackboard.StructuralType(ev.Field("structural_type")).Claimable() {
		return nil
	}
	version, _ := strconv.Atoi(ev.Field("version"))
	depth, _ := strconv.Atoi(ev.Field("depth"))
	claimID := blackboard.DeriveID("claim", ev.ArtefactID)
	iteration := 0
	if version > 1 {
		iteration = version - 1
	}
	nc := blackboard.NewClaim{
		Claim: &blackboard.Claim{
			ID: claimID, ArtefactID: ev.ArtefactID, WorkflowID: ev.WorkflowID,
			Status:       blackboard.ClaimPendingConsensus,
			Iteration:    iteration,
			ArtefactType: ev.Field("type"),
		},
		ByArtefact: true,
		Budget: blackboard.Budget{MaxArtefacts: c.cfg.MaxWorkflowArtefacts, MaxDepth: c.cfg.MaxChainDepth, Depth: depth,
			MaxTokens: c.cfg.MaxWorkflowTokens},
		Epoch: c.epoch(),
	}
	var bidders []string
	if c.claims.Approvals.Gates(ev.Field("type"), ev.Agent) {
		// A gated artefact waits for a human before anyone is asked to
		// bid: no agent spends work on something a person may reject, and
		// liveness is read when the work can actually start.
		timeout, err := c.approvalTimeout(ctx, ev.WorkflowID)
		if err != nil {
			return err
		}
		nc.Claim.Status = blackboard.ClaimPendingApproval
		nc.ApprovalTimeout = timeout
		nc.Events = []blackboard.Event{{Type: blackboard.EventApprovalRequested, WorkflowID: ev.WorkflowID,
			ClaimID: claimID, ArtefactID: ev.ArtefactID, Agent: ev.Agent, Fields: map[string]string{
				"type": ev.Field("type"), "version": ev.Field("version"),
				"approval_timeout_ms": strconv.FormatInt(timeout.Milliseconds(), 10),
			}}}
	} else {
		cached := c.plans.get(ev.Field("type"), ev.Field("produced_by_role"))
		plan := cached.plan
		bidders = plan.Bidders
		nc.Claim.ExpectedBidders = plan.Bidders
		nc.Claim.AbsentConsumers = plan.Absent
		nc.Bids = cached.bids
		nc.Events = cached.event(claimID, ev.ArtefactID, ev.WorkflowID)
		nc.Inbox = plan.requests(claimID, ev.WorkflowID, bidTarget{ID: ev.ArtefactID, Type: ev.Field("type"),
			StructuralType: blackboard.StructuralType(ev.Field("structural_type")), ProducedByRole: ev.Field("produced_by_role")})
		nc.BidTimeout = c.claims.BidTimeout
		if len(plan.Bidders) > 0 {
			nc.GrantPlan = c.grantPlan(plan, ev.Field("type"), ev.Field("produced_by_role"))
		} else {
			nc.GrantPlan = c.decidedGrant(plan, cached.bids, ev.Field("type"))
			nc.GrantNow = nc.GrantPlan != nil
		}
		nc.FinishByResult = !c.cfg.NoResultCompletion
	}
	res, err := c.bb.CreateClaim(ctx, nc)
	id, created := res.ID, res.Created
	var budget *blackboard.BudgetError
	switch {
	case errors.As(err, &budget):
		return c.budgetExceeded(ctx, ev, budget, depth)
	case errors.Is(err, blackboard.ErrWorkflowEnded):
		c.log.Debug().Str("artefact_id", ev.ArtefactID).Str("workflow_id", ev.WorkflowID).Msg("no claim: the workflow has ended")
		return nil
	case err != nil:
		return err
	}
	failpoint.Hit("claim-created")
	if created {
		c.m.ClaimsCreated.Inc()
		if nc.Claim.Status == blackboard.ClaimPendingApproval {
			c.m.ApprovalsRequested.Inc()
			if nc.ApprovalTimeout > 0 {
				c.advancer.TimerArmedFunc(nc.ApprovalTimeout)
			}
			c.log.Info().Str("claim_id", id).Str("artefact_id", ev.ArtefactID).Str("workflow_id", ev.WorkflowID).
				Str("type", ev.Field("type")).Str("event", string(blackboard.EventApprovalRequested)).Msg("waiting for approval")
			return nil
		}
		wake := c.claims.BidTimeout
		if nc.GrantPlan != nil && nc.GrantPlan.LeaseCheck < wake {
			// The last bid may grant in its own script and arm the lease
			// check there, out of this loop's sight: wake by then so a
			// lost lease is noticed on time, not at the next maxTimerSleep.
			wake = nc.GrantPlan.LeaseCheck
		}
		c.advancer.TimerArmedFunc(wake)
		c.log.Debug().Str("claim_id", id).Str("artefact_id", ev.ArtefactID).Str("workflow_id", ev.WorkflowID).
			Strs("bidders", bidders).Msg("claim created")
	}
	if nc.Claim.Status == blackboard.ClaimPendingApproval {
		return nil
	}
	if res.Granted {
		// Granted by its own creation: nothing waits for a decision.
		c.m.Grants.WithLabelValues(nc.GrantPlan.Phase).Inc()
		for _, b := range nc.Bids {
			c.m.Bids.WithLabelValues(string(b)).Inc()
		}
		c.m.ConsensusLatency.Observe(0)
		c.log.Info().Str("claim_id", id).Str("workflow_id", ev.WorkflowID).Str("phase", nc.GrantPlan.Phase).
			Str("agent", nc.GrantPlan.Agent).Str("granted_by", "rules").Msg("claim granted")
		return nil
	}
	if len(bidders) == 0 {
		// Nobody was asked, so no bid event will ever name this claim
		// (consensus decides at once: a dead end, or waiting for absent
		// consumers).
		return c.advancer.Advance(ctx, id, ev.WorkflowID, false)
	}
	return nil
}

// grantPlan is the grant the last expected bid may apply in its own
// script (see blackboard.GrantPlan), decided now by the consensus rules
// from the bids the bidders' configured rules predict, or nil when the
// orchestrator keeps the decision: a bidder's bid is not known in advance
// (a bid script), a consumer was absent (whether its answer is needed is
// consensus's call), or the decided grant is not to one agent alone.
func (c *ClaimCreator) grantPlan(plan bidPlan, typ, role string) *blackboard.GrantPlan {
	if c.cfg.NoBidGrants || len(plan.Bidders) == 0 || len(plan.Absent) > 0 {
		return nil
	}
	expect := make(map[string]blackboard.Bid, len(plan.Bidders))
	for _, agent := range plan.Bidders {
		r, ok := c.claims.Rules[agent]
		if !ok {
			return nil
		}
		bid, _, sure := r.Static(typ, role)
		if !sure {
			return nil
		}
		expect[agent] = bid
	}
	return c.planOf(&blackboard.Claim{ExpectedBidders: plan.Bidders, BidDeadlineMs: 1}, expect, expect)
}

// planOf is the GrantPlan of the consensus the orchestrator reaches on
// claim cl (before its bid deadline) with bids, or nil when that is not a
// grant to one agent alone; expect is the plan's Expect.
func (c *ClaimCreator) planOf(cl *blackboard.Claim, bids, expect map[string]blackboard.Bid) *blackboard.GrantPlan {
	d := decideConsensus(c.advancer.consensusInput(&blackboard.ClaimState{Claim: cl, Bids: bids, NowMs: 0}))
	if d.Step != stepGrant || len(d.Agents) != 1 {
		return nil
	}
	agent, info := d.Agents[0], phaseInfo[d.Phase]
	if expect == nil {
		expect = map[string]blackboard.Bid{agent: bids[agent]}
	}
	return &blackboard.GrantPlan{MaxConcurrentClaims: c.claims.MaxConcurrentClaims, LeaseCheck: c.claims.LeaseTTL + leaseMargin,
		Expect: expect, Agent: agent, Phase: info.name, Kind: info.grant,
		MaxAttempts: c.claims.retryPolicy(agent, info.grant).Attempts()}
}

// decidedGrant is the grant to apply at creation (NewClaim.GrantNow) of
// a claim nobody is asked to bid on (plan.Bidders is empty): every bid is one the agents' rules
// decide, recorded with the claim (bids), so the consensus the
// orchestrator would reach right after creating it is known now. It is
// nil when that consensus is not a grant to one agent alone (a dead end,
// several parallel agents, a wait for absent consumers) or when the bid
// grants are off (--disable-bid-grants). A repeat of a claim already
// created writes nothing, its plan included. The script still holds the
// grant for the scheduler (paused, a contested max_concurrent_claims
// slot), and the orchestrator then decides as it always did.
func (c *ClaimCreator) decidedGrant(plan bidPlan, bids map[string]blackboard.Bid, typ string) *blackboard.GrantPlan {
	if c.cfg.NoBidGrants || len(plan.Absent) > 0 || len(bids) == 0 {
		return nil
	}
	// The script writes the bids itself: the plan need only name the
	// granted agent's.
	return c.planOf(&blackboard.Claim{BidDeadlineMs: 1, ArtefactType: typ}, bids, nil)
}

// approvalTimeout is how long an approval in this workflow waits: the
// goal's `approval_timeout` metadata (vault frontmatter, forage flag) when
// it has a valid one, else approvals.timeout.
func (c *ClaimCreator) approvalTimeout(ctx context.Context, workflowID string) (time.Duration, error) {
	goal, err := c.bb.GetArtefact(ctx, workflowID)
	if err != nil {
		if errors.Is(err, blackboard.ErrNotFound) {
			return c.claims.Approvals.Timeout.Std(), nil
		}
		return 0, err
	}
	if raw := goal.Metadata["approval_timeout"]; raw != "" {
		d, perr := time.ParseDuration(raw)
		if perr == nil && d >= 0 {
			return d, nil
		}
		c.log.Warn().Str("workflow_id", workflowID).Str("approval_timeout", raw).
			Msg("the goal's approval_timeout is not a duration; using approvals.timeout")
	}
	return c.claims.Approvals.Timeout.Std(), nil
}

// budgetExceeded records why the chain stops and fails the workflow. Both
// writes are idempotent (a derived Failure id; EndWorkflow only ends a
// running workflow), so a repeat after a crash finishes the job.
func (c *ClaimCreator) budgetExceeded(ctx context.Context, ev blackboard.Event, budget *blackboard.BudgetError, depth int) error {
	name := budget.Setting()
	id := blackboard.DeriveID("failure", ev.ArtefactID, FailureBudget)
	payload := fmt.Sprintf("Workflow budget %s (%d) exceeded at artefact %s (%s, chain depth %d); no claim was created for it. "+
		"Raise orchestrator.%s in sett.yml if the workflow legitimately needs more.", name, budget.Limit, ev.ArtefactID,
		ev.Field("type"), depth, name)
	f := &blackboard.Artefact{
		ID: id, LogicalID: id, Version: 1,
		StructuralType:  blackboard.StructuralFailure,
		Type:            FailureBudget,
		Payload:         payload,
		SourceArtefacts: []string{ev.ArtefactID},
		ProducedByRole:  "orchestrator",
		WorkflowID:      ev.WorkflowID,
		Summary:         fmt.Sprintf("%s (%d) exceeded", name, budget.Limit),
		Depth:           depth + 1,
	}
	if err := c.bb.CreateArtefact(ctx, f, blackboard.WriteAuth{Epoch: c.epoch()}); err != nil && !errors.Is(err, blackboard.ErrExists) {
		return err
	}
	reason := fmt.Sprintf("workflow budget %s (%d) exceeded; see Failure artefact %s", name, budget.Limit, id)
	// The budget_exceeded event is written by the script that ends the
	// workflow: a crash cannot leave the end without its explanation.
	ended, err := c.bb.EndWorkflow(ctx, ev.WorkflowID, blackboard.WorkflowFailed, reason, c.epoch(),
		blackboard.Event{Type: blackboard.EventBudgetExceeded, WorkflowID: ev.WorkflowID,
			ArtefactID: ev.ArtefactID, Fields: map[string]string{"budget": name, "limit": strconv.Itoa(budget.Limit), "failure_id": id}})
	if ended {
		c.log.Warn().Str("workflow_id", ev.WorkflowID).Str("artefact_id", ev.ArtefactID).Str("budget", name).
			Int("limit", budget.Limit).Str("event", string(blackboard.EventBudgetExceeded)).Msg("workflow budget exceeded")
	}
	return err
}

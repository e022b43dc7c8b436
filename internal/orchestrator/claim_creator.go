package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/failpoint"
	"github.com/settdev/sett/pkg/blackboard"
)

// ClaimCreator gives every claimable artefact its one claim and asks the
// live agents to bid on it, in a single script call (one round trip on the
// hot path). Budgets are checked by the same script.
//
// Safe for concurrent use.
type ClaimCreator struct {
	bb       *blackboard.Client
	set      Settings
	dir      *AgentDirectory
	advancer *ClaimAdvancer
	epoch    func() int64
	m        *Metrics
	log      zerolog.Logger
}

// NewClaimCreator returns a creator that hands claims nobody is asked to
// bid on straight to advancer.
func NewClaimCreator(bb *blackboard.Client, set Settings, dir *AgentDirectory, advancer *ClaimAdvancer, epoch func() int64, m *Metrics, log zerolog.Logger) *ClaimCreator {
	return &ClaimCreator{bb: bb, set: set, dir: dir, advancer: advancer, epoch: epoch, m: m,
		log: log.With().Str("component", "claim_creator").Logger()}
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
			Status:    blackboard.ClaimPendingConsensus,
			Iteration: iteration,
		},
		ByArtefact: true,
		Budget: blackboard.Budget{MaxArtefacts: c.set.MaxWorkflowArtefacts, MaxDepth: c.set.MaxChainDepth, Depth: depth,
			MaxTokens: c.set.MaxWorkflowTokens},
		Epoch: c.epoch(),
	}
	var bidders []string
	if c.set.Approvals.Gates(ev.Field("type"), ev.Agent) {
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
		plan := planBids(c.dir, c.set.Rules, ev.Field("type"), ev.Field("produced_by_role"))
		bidders = plan.Bidders
		nc.Claim.ExpectedBidders = plan.Bidders
		nc.Bids = plan.decided()
		nc.Events = plan.event(claimID, ev.ArtefactID, ev.WorkflowID)
		nc.Inbox = plan.requests(claimID, ev.WorkflowID, bidTarget{ID: ev.ArtefactID, Type: ev.Field("type"),
			StructuralType: blackboard.StructuralType(ev.Field("structural_type")), ProducedByRole: ev.Field("produced_by_role")})
		nc.BidTimeout = c.set.BidTimeout
		nc.GrantPlan = c.grantPlan(plan.Bidders)
		nc.FinishByResult = !c.set.NoResultCompletion
	}
	id, created, err := c.bb.CreateClaim(ctx, nc)
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
		wake := c.set.BidTimeout
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
	if len(bidders) == 0 {
		// Nobody was asked, so no bid event will ever name this claim.
		return c.advancer.Advance(ctx, id, ev.WorkflowID, false)
	}
	return nil
}

// grantPlan is what the last expected bid needs to grant the claim in its
// own script, as consensus would (see blackboard.GrantPlan), or nil when
// the orchestrator keeps every grant to itself.
func (c *ClaimCreator) grantPlan(bidders []string) *blackboard.GrantPlan {
	if c.set.NoBidGrants || len(bidders) == 0 {
		return nil
	}
	p := &blackboard.GrantPlan{MaxConcurrentClaims: c.set.MaxConcurrentClaims, LeaseCheck: c.set.LeaseTTL + leaseMargin,
		MaxAttempts: make(map[string]map[blackboard.GrantKind]int, len(bidders))}
	for _, agent := range bidders {
		kinds := map[blackboard.GrantKind]int{}
		for _, k := range []blackboard.GrantKind{blackboard.GrantReview, blackboard.GrantClaim, blackboard.GrantExclusive} {
			kinds[k] = c.set.retryPolicy(agent, k).Attempts()
		}
		p.MaxAttempts[agent] = kinds
	}
	return p
}

// approvalTimeout is how long an approval in this workflow waits: the
// goal's `approval_timeout` metadata (vault frontmatter, forage flag) when
// it has a valid one, else approvals.timeout.
func (c *ClaimCreator) approvalTimeout(ctx context.Context, workflowID string) (time.Duration, error) {
	goal, err := c.bb.GetArtefact(ctx, workflowID)
	if err != nil {
		if errors.Is(err, blackboard.ErrNotFound) {
			return c.set.Approvals.Timeout.Std(), nil
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
	return c.set.Approvals.Timeout.Std(), nil
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
	ended, err := c.bb.EndWorkflow(ctx, ev.WorkflowID, blackboard.WorkflowFailed, reason, c.epoch())
	if err != nil {
		return err
	}
	if ended {
		c.log.Warn().Str("workflow_id", ev.WorkflowID).Str("artefact_id", ev.ArtefactID).Str("budget", name).
			Int("limit", budget.Limit).Str("event", string(blackboard.EventBudgetExceeded)).Msg("workflow budget exceeded")
		_, err = c.bb.AppendEvent(ctx, blackboard.Event{Type: blackboard.EventBudgetExceeded, WorkflowID: ev.WorkflowID,
			ArtefactID: ev.ArtefactID, Fields: map[string]string{"budget": name, "limit": strconv.Itoa(budget.Limit), "failure_id": id}})
	}
	return err
}

package blackboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Budget limits a workflow; zero fields mean unlimited.
type Budget struct {
	// MaxArtefacts refuses new claims once the workflow holds more
	// artefacts than this.
	MaxArtefacts int
	// MaxDepth refuses a claim for an artefact deeper than this.
	MaxDepth int
	// Depth is the chain depth of the artefact being claimed.
	Depth int
	// MaxTokens refuses new claims once the workflow has spent more model
	// tokens than this (max_workflow_tokens).
	MaxTokens int64
}

// BudgetError is returned (wrapping ErrBudgetExceeded) when a claim would
// exceed a workflow budget.
type BudgetError struct {
	Which string // "artefacts" (max_workflow_artefacts), "depth" (max_chain_depth) or "tokens" (max_workflow_tokens)
	Limit int
}

// Setting is the sett.yml key (under orchestrator) of the budget.
func (e *BudgetError) Setting() string {
	switch e.Which {
	case "depth":
		return "max_chain_depth"
	case "tokens":
		return "max_workflow_tokens"
	}
	return "max_workflow_artefacts"
}

func (e *BudgetError) Error() string {
	name := e.Setting()
	return fmt.Sprintf("blackboard: workflow budget %s (%d) exceeded", name, e.Limit)
}

// Unwrap lets errors.Is match ErrBudgetExceeded.
func (e *BudgetError) Unwrap() error { return ErrBudgetExceeded }

// NewClaim describes a claim to create and what comes with it.
type NewClaim struct {
	// Claim holds the initial fields: ID, ArtefactID, WorkflowID, Status,
	// ExpectedBidders or the direct grant, AdditionalContextIDs,
	// ParentClaimID, Iteration, Attempts. Timestamps, priority and the bid
	// deadline are set by the script.
	Claim *Claim
	// ByArtefact makes this the artefact's one regular claim: a repeat
	// returns the existing claim instead of creating another.
	ByArtefact bool
	// AddsItem counts the claim as new open work of its workflow (feedback
	// claims); a regular claim takes over its artefact's open item.
	AddsItem bool
	// BidTimeout sets bid_deadline_ms and arms the claim's timer.
	BidTimeout time.Duration
	// TimerIn arms the claim's timer when there is no bid timeout.
	TimerIn time.Duration
	// ApprovalTimeout, for a claim created in pending_approval, is how
	// long the approval waits before it expires (zero: never); the
	// request and expiry times come from the Redis clock.
	ApprovalTimeout time.Duration
	// Budget is checked against the workflow before anything is written.
	Budget Budget
	// Grants are agent → token pairs for a claim granted at creation.
	Grants map[string]string
	// Counts makes the claim hold a scheduler slot from creation (a
	// feedback claim continuing its parent's work; it is not held back by
	// max_concurrent_claims, which its parent already held).
	Counts bool
	// Bids are decided at creation for agents that are not asked (their
	// rules already say ignore); they must not be ExpectedBidders.
	Bids map[string]Bid
	// Inbox holds the bid requests or grants to deliver.
	Inbox []InboxMessage
	// Events are extra events to append after claim_created.
	Events []Event
	// Epoch is the orchestrator's leader epoch (fencing).
	Epoch int64
	// GrantPlan, on a claim that asks for bids, lets the last expected
	// bid grant it in the same script (see GrantPlan); nil leaves every
	// grant to the orchestrator. It needs Epoch.
	GrantPlan *GrantPlan
	// GrantNow applies GrantPlan in the creating script (the grant at
	// creation, see create_claim.lua): for a claim nobody is asked to bid
	// on, whose Bids, recorded with it, are the ones the plan was decided
	// from. The script holds the grant back only for the scheduler
	// (paused, a contested max_concurrent_claims slot), and says so in
	// CreatedClaim.Held. It needs GrantPlan, a claim in
	// pending_consensus with no ExpectedBidders and no Inbox.
	GrantNow bool
	// FinishByResult lets the result of the claim's exclusive grant
	// complete the claim in its own script when nothing calls for the
	// orchestrator's judgement (see create_artefact.lua): the claim's
	// finish_plan field records Epoch, and the script completes only
	// while that epoch is still the stored one. It needs Epoch.
	FinishByResult bool
}

// CreatedClaim is what CreateClaim did.
type CreatedClaim struct {
	// ID is the claim's id: the new one, or on a ByArtefact repeat the
	// existing one.
	ID string
	// Created is false on a ByArtefact repeat (nothing was written).
	Created bool
	// Granted: GrantNow's planned grant was written with the claim.
	Granted bool
	// Held, with GrantNow and not Granted, says why the grant was left to
	// the orchestrator: "paused" or "capacity" (max_concurrent_claims).
	Held string
}

// CreateClaim creates a claim atomically with its indexes, timer, inbox
// messages and claim_created event (and, with GrantNow, its grant). With
// ByArtefact a repeat is not an error: it returns the existing claim's id
// and Created false.
//
// Errors: ErrInvalid, ErrExists (a non-ByArtefact id that is taken),
// ErrWorkflowEnded, *BudgetError (ErrBudgetExceeded), ErrNotFound (no
// workflow), ErrFenced.
func (c *Client) CreateClaim(ctx context.Context, nc NewClaim) (CreatedClaim, error) {
	cl := nc.Claim
	if cl == nil {
		return CreatedClaim{}, fmt.Errorf("%w: claim: nil", ErrInvalid)
	}
	if nc.GrantNow && (nc.GrantPlan == nil || cl.Status != ClaimPendingConsensus || len(cl.ExpectedBidders) > 0 ||
		len(nc.Inbox) > 0 || cl.Rev != 0) {
		return CreatedClaim{}, fmt.Errorf("%w: claim %s: a grant at creation needs a grant plan, a new claim in %s, "+
			"nobody asked to bid and no inbox message", ErrInvalid, cl.ID, ClaimPendingConsensus)
	}
	for name, v := range map[string]string{"id": cl.ID, "artefact_id": cl.ArtefactID, "workflow_id": cl.WorkflowID} {
		if err := ValidateID(v); err != nil {
			return CreatedClaim{}, fmt.Errorf("%w: claim %s: %v", ErrInvalid, name, err)
		}
	}
	if !cl.Status.Valid() || cl.Status.Final() {
		return CreatedClaim{}, fmt.Errorf("%w: claim: initial status %q", ErrInvalid, cl.Status)
	}
	// Refuse what DecodeClaim would refuse (a context id that is not an
	// id, a negative iteration, an oversized list...): a stored claim that
	// cannot be read back would sit in the active index, failing every
	// reconcile. The fields the script sets are left out of the check.
	probe := *cl
	probe.CreatedAtMs, probe.UpdatedAtMs, probe.BidDeadlineMs, probe.Priority = 0, 0, 0, 0
	if _, err := DecodeClaim(EncodeClaim(&probe)); err != nil {
		return CreatedClaim{}, fmt.Errorf("%w: claim %s would be unreadable: %v", ErrInvalid, cl.ID, err)
	}
	req := claimRequest{
		ID: cl.ID, ArtefactID: cl.ArtefactID, WorkflowID: cl.WorkflowID, Status: string(cl.Status),
		ByArtefact: nc.ByArtefact, AddsItem: nc.AddsItem, BidTimeoutMs: nc.BidTimeout.Milliseconds(),
		TimerInMs: nc.TimerIn.Milliseconds(), ApprovalTimeoutMs: nc.ApprovalTimeout.Milliseconds(),
		MaxArtefacts: nc.Budget.MaxArtefacts, MaxDepth: nc.Budget.MaxDepth, Depth: nc.Budget.Depth,
		MaxTokens: nc.Budget.MaxTokens, ClaimChannel: c.keys.ClaimEvents(), WorkflowChannel: c.keys.WorkflowEvents(),
		Counts: nc.Counts,
	}
	if nc.Epoch != 0 {
		req.Epoch = strconv.FormatInt(nc.Epoch, 10)
	}
	if len(nc.Grants) > 0 {
		req.Grants = flatten(nc.Grants)
	}
	if len(nc.Bids) > 0 {
		bids := make(map[string]string, len(nc.Bids))
		for agent, b := range nc.Bids {
			if err := ValidateAgentName(agent); err != nil || !b.Valid() {
				return CreatedClaim{}, fmt.Errorf("%w: claim %s: decided bid %q of agent %q", ErrInvalid, cl.ID, b, agent)
			}
			bids[agent] = string(b)
		}
		req.Bids = flatten(bids)
	}
	if len(nc.Events) > 0 {
		req.Events = c.encodeEvents(nc.Events)
	}
	byArtefact := c.keys.Claim(cl.ID)
	if nc.ByArtefact {
		byArtefact = c.keys.ClaimByArtefact(cl.ArtefactID)
	}
	keys := []string{
		c.keys.Claim(cl.ID), byArtefact, c.keys.ActiveClaims(), c.keys.WorkflowClaimIndex(cl.WorkflowID),
		c.keys.ClaimIDIndex(), c.keys.Events(), c.keys.Workflow(cl.WorkflowID), c.keys.Timers(),
		c.keys.Epoch(), c.keys.Grants(cl.ID), c.keys.Bids(cl.ID), c.keys.ApprovalIndex(), c.keys.Running(),
	}
	if nc.GrantNow {
		// A grant at creation sends no inbox message of its own: the
		// planned agent's keys take the places the inbox keys would.
		a := nc.GrantPlan.Agent
		keys = append(keys, c.keys.Waiting(), c.keys.Control(), c.keys.Capacity(),
			c.keys.AgentGrants(a), c.keys.AgentRunning(a), c.keys.AgentWaiting(a), c.keys.AgentReplicas(a))
	}
	keys, inbox, err := c.encodeInbox(keys, nc.Inbox)
	if err != nil {
		return CreatedClaim{}, err
	}
	req.Inbox = inbox
	var plan string
	if nc.GrantPlan != nil {
		if plan, err = nc.GrantPlan.encode(c.keys, nc.Epoch); err != nil {
			return CreatedClaim{}, err
		}
		if nc.GrantNow {
			// Applied (or dropped) by this very script: never stored.
			req.GrantNow = json.RawMessage(plan)
		}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return CreatedClaim{}, fmt.Errorf("blackboard: encode request: %w", err)
	}
	fields := claimFields(cl)
	args := []any{string(body)}
	if plan != "" && !nc.GrantNow {
		args = append(args, "grant_plan", plan)
	}
	if nc.FinishByResult {
		if nc.Epoch <= 0 {
			return CreatedClaim{}, fmt.Errorf("%w: claim %s: a finish plan needs the leader epoch it was made under", ErrInvalid, cl.ID)
		}
		args = append(args, "finish_plan", strconv.FormatInt(nc.Epoch, 10))
	}
	for _, p := range fields {
		switch p[0] {
		case "created_at_ms", "updated_at_ms", "priority", "bid_deadline_ms",
			"approval_requested_at_ms", "approval_expires_at_ms":
			continue // set by the script from the server clock and the workflow
		}
		args = append(args, p[0], p[1])
	}
	octx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(octx, c.scripts.createClaim, keys, args...)
	if err != nil {
		return CreatedClaim{}, err
	}
	switch res[0] {
	case "OK":
		r := CreatedClaim{ID: cl.ID, Created: true}
		if len(res) > 3 && res[3] == "granted" {
			r.Granted = true
		} else if len(res) > 3 {
			r.Held = res[3]
		}
		return r, nil
	case "EXISTS":
		if nc.ByArtefact {
			return CreatedClaim{ID: res[1]}, nil
		}
	case "BUDGET_EXCEEDED":
		limit, _ := strconv.Atoi(res[2])
		return CreatedClaim{}, fmt.Errorf("claim for artefact %s: %w", cl.ArtefactID, &BudgetError{Which: res[1], Limit: limit})
	}
	return CreatedClaim{}, fmt.Errorf("claim %s for artefact %s: %w", cl.ID, cl.ArtefactID, scriptError("create_claim", res))
}

// claimRequest is create_claim.lua's ARGV[1] (described there); a struct
// rather than a map, because encoding/json sorts and boxes a map on every
// claim.
type claimRequest struct {
	ID                string           `json:"id"`
	ArtefactID        string           `json:"artefact_id"`
	WorkflowID        string           `json:"workflow_id"`
	Status            string           `json:"status"`
	ByArtefact        bool             `json:"by_artefact"`
	AddsItem          bool             `json:"adds_item"`
	BidTimeoutMs      int64            `json:"bid_timeout_ms"`
	TimerInMs         int64            `json:"timer_in_ms"`
	ApprovalTimeoutMs int64            `json:"approval_timeout_ms"`
	MaxArtefacts      int              `json:"max_artefacts"`
	MaxDepth          int              `json:"max_depth"`
	Depth             int              `json:"depth"`
	MaxTokens         int64            `json:"max_tokens"`
	ClaimChannel      string           `json:"claim_channel"`
	WorkflowChannel   string           `json:"workflow_channel"`
	Epoch             string           `json:"epoch,omitempty"`
	Grants            []string         `json:"grants,omitempty"`
	Bids              []string         `json:"bids,omitempty"`
	Events            []map[string]any `json:"events,omitempty"`
	Inbox             []inboxArg       `json:"inbox,omitempty"`
	Counts            bool             `json:"counts,omitempty"`
	GrantNow          json.RawMessage  `json:"grant_now,omitempty"`
}

// ClaimPatch lists the claim fields a transition sets; zero values are left
// unchanged (no transition ever clears a field).
type ClaimPatch struct {
	ExpectedBidders []string
	// BidRounds and NoAnswerSinceMs record a new round of bid requests
	// (see Claim).
	BidRounds       int
	NoAnswerSinceMs int64
	AwaitedAgents   []string
	// AbsentConsumers records the configured consumers that were not
	// alive when consensus started (an approved claim starts it late).
	AbsentConsumers       []string
	GrantedReviewAgents   []string
	GrantedParallelAgents []string
	GrantedExclusiveAgent string
	FeedbackClaimID       string
	TerminationReason     string
	CompletionReason      string
	Attempts              int
	HandBacks             int
	// Retries replaces the claim's retry states as a whole.
	Retries map[string]RetryState
	// ReviewDecision records the review policy's decision.
	ReviewDecision string
}

func (p ClaimPatch) fields() []string {
	var h hashFields
	h.list("expected_bidders", p.ExpectedBidders)
	h.int("bid_rounds", int64(p.BidRounds))
	h.int("no_answer_since_ms", p.NoAnswerSinceMs)
	h.list("awaited_agents", p.AwaitedAgents)
	h.list("absent_consumers", p.AbsentConsumers)
	h.list("granted_review_agents", p.GrantedReviewAgents)
	h.list("granted_parallel_agents", p.GrantedParallelAgents)
	h.str("granted_exclusive_agent", p.GrantedExclusiveAgent)
	h.str("feedback_claim_id", p.FeedbackClaimID)
	h.str("termination_reason", p.TerminationReason)
	h.str("completion_reason", p.CompletionReason)
	h.int("attempts", int64(p.Attempts))
	h.int("handbacks", int64(p.HandBacks))
	h.retries("retries", p.Retries)
	h.str("review_decision", p.ReviewDecision)
	out := make([]string, 0, 2*len(h))
	for _, kv := range h {
		out = append(out, kv[0], kv[1])
	}
	return out
}

// readable checks the patch against DecodeClaim's rules (ids, ranges,
// sizes), so that a transition can never store a claim that every later
// read refuses as corrupt.
func (p ClaimPatch) readable(claimID, workflowID string) error {
	m := map[string]string{
		"id": claimID, "artefact_id": claimID, "workflow_id": workflowID,
		"status": string(ClaimComplete), "created_at_ms": "0",
	}
	set := p.fields()
	for i := 0; i+1 < len(set); i += 2 {
		m[set[i]] = set[i+1]
	}
	_, err := DecodeClaim(m)
	return err
}

// Transition is one compare-and-set step of a claim.
type Transition struct {
	ClaimID    string
	WorkflowID string
	// From and Rev are what the caller read; the step applies only if the
	// claim still has them. Rev < 0 skips the rev comparison.
	From ClaimStatus
	Rev  int
	To   ClaimStatus
	Set  ClaimPatch
	// IgnoreBids records 'ignore' for agents that did not bid in time.
	IgnoreBids []string
	// Bids records bids decided without asking, agent → bid (the ignores
	// and rule-decided bids of a claim whose consensus this step starts,
	// like NewClaim.Bids at creation); an agent that already has a bid
	// keeps it. Such agents must not be in ExpectedBidders.
	Bids map[string]Bid
	// Grants sets agent → token pairs.
	Grants map[string]string
	Inbox  []InboxMessage
	// TimerIn (re)arms the claim's timer when ArmTimer is true; final
	// statuses always clear it.
	ArmTimer bool
	TimerIn  time.Duration
	// BidTimeout, when positive, starts consensus: bid_deadline_ms is set
	// to now+BidTimeout (Redis clock) and the claim's timer armed at it.
	BidTimeout time.Duration
	// CloseItem closes the claim's open item in its workflow (final
	// statuses; a rework hands its item to the feedback claim instead).
	CloseItem bool
	// FailWorkflow ends the workflow with WorkflowStatus (default failed)
	// and FailReason.
	FailWorkflow   bool
	FailReason     string
	WorkflowStatus WorkflowStatus
	Events         []Event
	Epoch          int64
	// Gate, on a step that grants work, subjects it to the scheduler: it
	// is not applied while the instance is paused, nor (unless exempt)
	// while max_concurrent_claims claims hold slots or better-ranked
	// claims wait for the free ones — TransitionClaim then returns
	// ErrWaiting and the claim waits in the scheduler's queue.
	Gate *GlobalGate
	// Release lists the agents whose grants on the claim end (all of
	// them on a final status; a withdrawn grant otherwise): their slots go
	// to their next waiting grants and their leases are deleted (a
	// running tool's cub sees it and stops it).
	Release []string
	// ClearOutputs lists agents whose output and failure mark are removed
	// so that they deliver again (a retry after a failure).
	ClearOutputs []string
	// Queue lists entries for the orchestrator's own queue, appended in
	// the same step (work that must follow the transition at least once,
	// such as the escalation hook).
	Queue []Event
	// ChainEnd, on a claim that ends because no configured agent takes
	// its artefact, is a short note ("Plan: no agent consumes this type")
	// added to the workflow's chain_ends; a workflow completed later lists
	// them in its outcome, so success says which branches ended by
	// configuration rather than by work.
	ChainEnd string
	// CountEnd says the caller counts a workflow CloseItem completes
	// (TransitionResult.Ended): that end is then not queued as
	// workflow_completed for the orchestrator, saving it a read per
	// workflow. False keeps the queue entry.
	CountEnd bool
}

// TransitionResult is what an applied Transition reports.
type TransitionResult struct {
	// Rev is the claim's new rev.
	Rev int
	// Waited is how long the claim waited for a slot before this step
	// (zero when it did not wait).
	Waited time.Duration
	// Ended is whether CloseItem completed the workflow; only reported
	// when the transition asked for it (CountEnd).
	Ended bool
}

// GlobalGate says how a granting step meets the instance-wide limit.
type GlobalGate struct {
	// Limit is orchestrator.max_concurrent_claims (0: no limit).
	Limit int
	// Check subjects the step to Limit; false exempts it (the claim
	// already holds a slot, or continues one).
	Check bool
	// Counts makes the claim hold a slot from this step until it ends.
	Counts bool
}

// TransitionClaim applies t atomically and returns what it did (the
// claim's new rev, the wait for a slot, the workflow's end).
// Errors: ErrStaleStatus (someone else moved the claim first), ErrWaiting
// (the step waits for a slot or a resume; nothing applied), ErrNotFound,
// ErrFenced, ErrInvalid.
func (c *Client) TransitionClaim(ctx context.Context, t Transition) (TransitionResult, error) {
	if err := ValidateID(t.ClaimID); err != nil {
		return TransitionResult{}, err
	}
	if err := ValidateID(t.WorkflowID); err != nil {
		return TransitionResult{}, err
	}
	if !t.From.Valid() || !t.To.Valid() {
		return TransitionResult{}, fmt.Errorf("%w: transition %q -> %q", ErrInvalid, t.From, t.To)
	}
	// Final statuses are final (ClaimStatus.Final): the step to one
	// removed the claim from the active index and its timer, so a claim
	// moved out of it would be live with nothing left to reconcile it.
	if t.From.Final() {
		return TransitionResult{}, fmt.Errorf("%w: transition %q -> %q: %s is final", ErrInvalid, t.From, t.To, t.From)
	}
	if t.WorkflowStatus != "" && (!t.WorkflowStatus.Valid() || !t.WorkflowStatus.Final()) {
		return TransitionResult{}, fmt.Errorf("%w: transition ends workflow %s with status %q, not a final status", ErrInvalid, t.WorkflowID, t.WorkflowStatus)
	}
	if err := t.Set.readable(t.ClaimID, t.WorkflowID); err != nil {
		return TransitionResult{}, fmt.Errorf("%w: transition of claim %s would leave it unreadable: %v", ErrInvalid, t.ClaimID, err)
	}
	req := map[string]any{
		"id":               t.ClaimID,
		"workflow_id":      t.WorkflowID,
		"from":             string(t.From),
		"rev":              t.Rev,
		"to":               string(t.To),
		"close_item":       t.CloseItem,
		"count_end":        t.CountEnd,
		"fail_workflow":    t.FailWorkflow,
		"fail_reason":      t.FailReason,
		"workflow_status":  string(t.WorkflowStatus),
		"bid_timeout_ms":   t.BidTimeout.Milliseconds(),
		"chain_end":        t.ChainEnd,
		"claim_channel":    c.keys.ClaimEvents(),
		"workflow_channel": c.keys.WorkflowEvents(),
	}
	if t.Epoch != 0 {
		req["epoch"] = strconv.FormatInt(t.Epoch, 10)
	}
	if set := t.Set.fields(); len(set) > 0 {
		req["set"] = set
	}
	if len(t.Bids) > 0 || len(t.IgnoreBids) > 0 {
		// One list for the script: a silent agent's ignore and a decided
		// bid are both written only where no bid is stored (HSETNX).
		bids := make(map[string]string, len(t.Bids)+len(t.IgnoreBids))
		for agent, b := range t.Bids {
			if err := ValidateAgentName(agent); err != nil || !b.Valid() {
				return TransitionResult{}, fmt.Errorf("%w: transition of claim %s: decided bid %q of agent %q", ErrInvalid, t.ClaimID, b, agent)
			}
			bids[agent] = string(b)
		}
		for _, agent := range t.IgnoreBids {
			if err := ValidateAgentName(agent); err != nil {
				return TransitionResult{}, fmt.Errorf("%w: transition of claim %s: ignore of agent %q", ErrInvalid, t.ClaimID, agent)
			}
			bids[agent] = string(BidIgnore)
		}
		req["bids"] = flatten(bids)
	}
	if len(t.Grants) > 0 {
		req["grants"] = flatten(t.Grants)
	}
	if len(t.ClearOutputs) > 0 {
		req["clear_outputs"] = t.ClearOutputs
	}
	if len(t.Queue) > 0 {
		req["queue"] = c.encodeEvents(t.Queue)
	}

	if t.Gate != nil {
		req["global"] = map[string]any{"limit": t.Gate.Limit, "check": t.Gate.Check, "counts": t.Gate.Counts}
	}
	if t.ArmTimer {
		req["timer_in_ms"] = t.TimerIn.Milliseconds()
	}
	if len(t.Events) > 0 {
		req["events"] = c.encodeEvents(t.Events)
	}
	keys := []string{
		c.keys.Claim(t.ClaimID), c.keys.ActiveClaims(), c.keys.Events(), c.keys.Workflow(t.WorkflowID),
		c.keys.Timers(), c.keys.Epoch(), c.keys.Bids(t.ClaimID), c.keys.Grants(t.ClaimID),
		c.keys.OrchestratorQueue(), c.keys.ApprovalIndex(), c.keys.Outputs(t.ClaimID), c.keys.Failures(t.ClaimID),
		c.keys.Running(), c.keys.Waiting(), c.keys.Control(), c.keys.Capacity(),
	}
	keys, inbox, err := c.encodeInbox(keys, t.Inbox)
	if err != nil {
		return TransitionResult{}, err
	}
	if len(inbox) > 0 {
		req["inbox"] = inbox
	}
	if len(t.Release) > 0 {
		index := func(key string) int {
			for i, k := range keys {
				if k == key {
					return i + 1
				}
			}
			keys = append(keys, key)
			return len(keys)
		}
		release := make([]map[string]any, 0, len(t.Release))
		for _, agent := range t.Release {
			if err := ValidateAgentName(agent); err != nil {
				return TransitionResult{}, err
			}
			release = append(release, map[string]any{
				"gate":    c.agentGate(agent, index),
				"lease":   index(c.keys.Lease(t.ClaimID, agent)),
				"channel": c.keys.AgentEvents(agent),
			})
		}
		req["release"] = release
	}
	body, err := json.Marshal(req)
	if err != nil {
		return TransitionResult{}, fmt.Errorf("blackboard: encode request: %w", err)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.transitionClaim, keys, string(body))
	if err != nil {
		return TransitionResult{}, err
	}
	if res[0] == "WAITING" {
		return TransitionResult{}, fmt.Errorf("%w: claim %s waits (%s)", ErrWaiting, t.ClaimID, strings.Join(res[1:], " "))
	}
	if err := scriptError("transition_claim", res); err != nil {
		return TransitionResult{}, fmt.Errorf("claim %s %s -> %s: %w", t.ClaimID, t.From, t.To, err)
	}
	var r TransitionResult
	r.Rev, _ = strconv.Atoi(res[1])
	if len(res) > 3 {
		ms, _ := strconv.ParseInt(res[3], 10, 64)
		r.Waited = time.Duration(ms) * time.Millisecond
	}
	r.Ended = t.CountEnd && len(res) > 4 && res[4] == "1"
	return r, nil
}

// GetClaim reads one claim. Errors: ErrNotFound, ErrCorrupt.
func (c *Client) GetClaim(ctx context.Context, id string) (*Claim, error) {
	if err := ValidateID(id); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	m, err := c.rdb.HGetAll(ctx, c.keys.Claim(id)).Result()
	if err != nil {
		return nil, notFound(err, "claim", id)
	}
	cl, err := DecodeClaim(m)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("%w: claim %s", ErrNotFound, id)
		}
		return nil, fmt.Errorf("claim %s: %w", id, err)
	}
	return cl, nil
}

// ClaimForArtefact returns the id of an artefact's regular claim.
// Errors: ErrNotFound when the artefact has no claim (yet).
func (c *Client) ClaimForArtefact(ctx context.Context, artefactID string) (string, error) {
	if err := ValidateID(artefactID); err != nil {
		return "", err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	id, err := c.rdb.Get(ctx, c.keys.ClaimByArtefact(artefactID)).Result()
	if err != nil {
		return "", notFound(err, "claim for artefact", artefactID)
	}
	return id, nil
}

// GetBids reads a claim's bids: agent → bid.
func (c *Client) GetBids(ctx context.Context, claimID string) (map[string]Bid, error) {
	if err := ValidateID(claimID); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	m, err := c.rdb.HGetAll(ctx, c.keys.Bids(claimID)).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read bids of %s: %w", claimID, err)
	}
	return decodeBids(m), nil
}

func decodeBids(m map[string]string) map[string]Bid {
	out := make(map[string]Bid, len(m))
	for agent, b := range m {
		out[agent] = Bid(b)
	}
	return out
}

// SubmitBid records an agent's bid once. Errors: ErrExists (already bid),
// ErrStaleStatus (consensus is over), ErrNotInvited, ErrNotFound,
// ErrInvalid.
func (c *Client) SubmitBid(ctx context.Context, claimID, agent string, bid Bid) error {
	return c.submitBid(ctx, claimID, "", agent, bid, "")
}

// AnswerBidRequest submits the bid that answers a bid request read from
// the agent's inbox, and acknowledges the request in the same atomic step
// whatever the outcome (a duplicate or late bid also finishes it). Errors
// as SubmitBid.
//
// When this is the last expected bid and it wins the claim, the script
// grants the claim itself if the claim carries a GrantPlan that allows
// it; otherwise the orchestrator's bids_complete
// entry carries a snapshot of the claim, its bids and its workflow's
// status (see ConsensusSnapshot).
func (c *Client) AnswerBidRequest(ctx context.Context, req InboxEntry, bid Bid) error {
	return c.submitBid(ctx, req.ClaimID, req.WorkflowID, req.Agent, bid, req.StreamID)
}

func (c *Client) submitBid(ctx context.Context, claimID, workflowID, agent string, bid Bid, inboxEntry string) error {
	if err := ValidateID(claimID); err != nil {
		return err
	}
	if err := ValidateAgentName(agent); err != nil {
		return err
	}
	if !bid.Valid() {
		return fmt.Errorf("%w: bid %q is not one of %v", ErrInvalid, bid, AllBids())
	}
	req := map[string]any{
		"claim_id": claimID, "agent": agent, "bid": string(bid), "claim_channel": c.keys.ClaimEvents(),
	}
	if inboxEntry != "" {
		req["inbox_entry"], req["inbox_group"] = inboxEntry, inboxGroup
	}
	workflow := c.keys.Claim(claimID) // placeholder of the same slot
	if ValidateID(workflowID) == nil {
		req["snapshot"] = true
		workflow = c.keys.Workflow(workflowID)
	}
	body, _ := json.Marshal(req)
	ctx, cancel := c.op(ctx)
	defer cancel()
	// The bidder's own grant keys come along: if its bid completes
	// consensus and it wins, the script grants it at once (see GrantPlan).
	// A cub may write only its own agent's keys (internal/acl), so
	// another winner is left to the orchestrator.
	keys := []string{c.keys.Bids(claimID), c.keys.Claim(claimID), c.keys.Events(), c.keys.OrchestratorQueue(),
		c.keys.Inbox(agent), workflow, c.keys.Epoch(), c.keys.Timers(), c.keys.Running(), c.keys.Waiting(),
		c.keys.Control(), c.keys.Capacity(), c.keys.Grants(claimID),
		c.keys.AgentGrants(agent), c.keys.AgentRunning(agent), c.keys.AgentWaiting(agent), c.keys.AgentReplicas(agent)}
	res, err := c.run(ctx, c.scripts.submitBid, keys, string(body))
	if err != nil {
		return err
	}
	if err := scriptError("submit_bid", res); err != nil {
		return fmt.Errorf("bid of %s on claim %s: %w", agent, claimID, err)
	}
	return nil
}

// ClaimState is everything the orchestrator needs to decide a claim's next
// step, read in one pipelined round trip.
type ClaimState struct {
	Claim    *Claim
	Workflow *Workflow
	Bids     map[string]Bid
	// Grants maps agent → current grant token.
	Grants map[string]string
	// Outputs maps agent → the artefact id it produced for this claim.
	Outputs map[string]string
	// Failed lists the agents whose output is a Failure artefact.
	Failed map[string]bool
	// LiveLeases lists the granted agents whose work lease exists (only
	// filled when requested).
	LiveLeases map[string]bool
	// LeaseLeft gives, for each live lease with an expiry, the time it has
	// left: the orchestrator checks it again right when it would expire,
	// so that a cub cut off from Redis loses its grant one lease TTL
	// after its last renewal, not up to two.
	LeaseLeft map[string]time.Duration
	// HandedBack gives, for the requested agents whose cub handed their
	// grant back unfinished (a drain that ran out of time), the token of
	// the grant handed back.
	HandedBack map[string]string
	// DeliveredAtMs gives, for the requested agents whose grant reached
	// their inbox, when it did; an agent missing from it still waits for
	// one of its slots (its grant is queued, not lost).
	DeliveredAtMs map[string]int64
	// NowMs is the Redis clock at the time of the read.
	NowMs int64
	// Phase holds what GetClaimStateAndPhase read along with the claim
	// for the phase's end; nil otherwise.
	Phase *PhaseRead
}

// PhaseRead is a phase's end read in the same round trip as its claim:
// artefacts by id (nil when missing) and the workflow's shared memory, as
// ReadPhase returns them.
type PhaseRead struct {
	Artefacts map[string]*Artefact
	SharedDoc string
	SharedRev int64
}

// GetClaimState reads a claim with its workflow, bids, grants, outputs and
// the Redis clock in one round trip when workflowID (a hint, may be empty)
// names the claim's workflow, two otherwise; with leasesOf it also checks
// those agents' work leases. Errors: ErrNotFound, ErrCorrupt.
func (c *Client) GetClaimState(ctx context.Context, claimID, workflowID string, leasesOf []string) (*ClaimState, error) {
	return c.getClaimState(ctx, claimID, workflowID, leasesOf, nil)
}

// GetClaimStateAndPhase is GetClaimState (with a workflowID that must be
// the claim's) also reading, in the same round trip, the artefacts ids
// and the workflow's shared memory into the state's Phase: what the
// orchestrator needs when a result ends a phase, read before it knows
// whether it does (one read per result on the hot path).
func (c *Client) GetClaimStateAndPhase(ctx context.Context, claimID, workflowID string, ids []string) (*ClaimState, error) {
	if err := ValidateID(workflowID); err != nil {
		return nil, err
	}
	if err := validateIDs(ids...); err != nil {
		return nil, err
	}
	return c.getClaimState(ctx, claimID, workflowID, nil, ids)
}

func (c *Client) getClaimState(ctx context.Context, claimID, workflowID string, leasesOf, phaseIDs []string) (*ClaimState, error) {
	if err := ValidateID(claimID); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	claimCmd := pipe.HGetAll(ctx, c.keys.Claim(claimID))
	bidsCmd := pipe.HGetAll(ctx, c.keys.Bids(claimID))
	grantsCmd := pipe.HGetAll(ctx, c.keys.Grants(claimID))
	outCmd := pipe.HGetAll(ctx, c.keys.Outputs(claimID))
	failCmd := pipe.SMembers(ctx, c.keys.Failures(claimID))
	timeCmd := pipe.Time(ctx)
	var wfCmd *redis.MapStringStringCmd
	if ValidateID(workflowID) == nil {
		wfCmd = pipe.HGetAll(ctx, c.keys.Workflow(workflowID))
	}
	leaseCmds := make([]*redis.DurationCmd, len(leasesOf))
	deliveredCmds := make([]*redis.FloatCmd, len(leasesOf))
	handBackCmds := make([]*redis.StringCmd, len(leasesOf))
	for i, a := range leasesOf {
		leaseCmds[i] = pipe.PTTL(ctx, c.keys.Lease(claimID, a))
		handBackCmds[i] = pipe.Get(ctx, c.keys.HandBack(claimID, a))
		deliveredCmds[i] = pipe.ZScore(ctx, c.keys.AgentRunning(a), claimID)
	}
	var artCmds []*redis.MapStringStringCmd
	var smCmd *redis.SliceCmd
	if phaseIDs != nil {
		artCmds = make([]*redis.MapStringStringCmd, len(phaseIDs))
		for i, id := range phaseIDs {
			artCmds[i] = pipe.HGetAll(ctx, c.keys.Artefact(id))
		}
		smCmd = pipe.HMGet(ctx, c.keys.SharedMemory(workflowID), "json", "rev")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("blackboard: read claim state %s: %w", claimID, err)
	}
	if len(claimCmd.Val()) == 0 {
		return nil, fmt.Errorf("%w: claim %s", ErrNotFound, claimID)
	}
	cl, err := DecodeClaim(claimCmd.Val())
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", claimID, err)
	}
	st := &ClaimState{
		Claim:   cl,
		Bids:    decodeBids(bidsCmd.Val()),
		Grants:  grantsCmd.Val(),
		Outputs: outCmd.Val(),
		Failed:  make(map[string]bool, len(failCmd.Val())),
		NowMs:   timeCmd.Val().UnixMilli(),
	}
	for _, a := range failCmd.Val() {
		st.Failed[a] = true
	}
	if len(leasesOf) > 0 {
		st.LiveLeases = make(map[string]bool, len(leasesOf))
		st.LeaseLeft = make(map[string]time.Duration, len(leasesOf))
		st.DeliveredAtMs = make(map[string]int64, len(leasesOf))
		st.HandedBack = make(map[string]string)
		for i, a := range leasesOf {
			if tok := handBackCmds[i].Val(); tok != "" {
				st.HandedBack[a] = tok
			}
			// PTTL answers -2 for a missing key and -1 for one without an
			// expiry (go-redis passes both through as they are).
			st.LiveLeases[a] = false
			switch left := leaseCmds[i].Val(); {
			case left > 0:
				st.LiveLeases[a], st.LeaseLeft[a] = true, left
			case left == -1:
				st.LiveLeases[a] = true
			}
			if deliveredCmds[i].Err() == nil {
				st.DeliveredAtMs[a] = int64(deliveredCmds[i].Val())
			}
		}
	}
	var wm map[string]string
	if wfCmd != nil && workflowID == cl.WorkflowID {
		wm = wfCmd.Val()
	} else if wm, err = c.rdb.HGetAll(ctx, c.keys.Workflow(cl.WorkflowID)).Result(); err != nil {
		// Without a correct hint the workflow key is only known from the
		// claim, so it takes a second round trip.
		return nil, fmt.Errorf("blackboard: read workflow %s: %w", cl.WorkflowID, err)
	}
	if st.Workflow, err = DecodeWorkflow(wm); err != nil {
		return nil, fmt.Errorf("workflow %s of claim %s: %w", cl.WorkflowID, claimID, err)
	}
	if phaseIDs != nil && workflowID == cl.WorkflowID {
		arts, err := decodeArtefactCmds(phaseIDs, artCmds)
		if err != nil {
			return nil, err
		}
		ph := &PhaseRead{Artefacts: make(map[string]*Artefact, len(phaseIDs))}
		for i, id := range phaseIDs {
			ph.Artefacts[id] = arts[i]
		}
		v := smCmd.Val()
		ph.SharedDoc, _ = v[0].(string)
		if s, ok := v[1].(string); ok {
			ph.SharedRev, _ = strconv.ParseInt(s, 10, 64)
		}
		st.Phase = ph
	}
	return st, nil
}

// ActiveClaims lists the ids of every non-final claim, oldest first.
func (c *Client) ActiveClaims(ctx context.Context) ([]string, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	ids, err := c.rdb.ZRange(ctx, c.keys.ActiveClaims(), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read active claims: %w", err)
	}
	return ids, nil
}

// WorkflowClaims lists a workflow's claim ids, oldest first.
func (c *Client) WorkflowClaims(ctx context.Context, workflowID string) ([]string, error) {
	if err := ValidateID(workflowID); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	ids, err := c.rdb.ZRange(ctx, c.keys.WorkflowClaimIndex(workflowID), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read claims of workflow %s: %w", workflowID, err)
	}
	return ids, nil
}

// GetClaims reads many claims in one pipelined round trip; missing claims
// are nil in the aligned result.
func (c *Client) GetClaims(ctx context.Context, ids []string) ([]*Claim, error) {
	return getMany(ctx, c, ids, "claim", c.keys.Claim, DecodeClaim)
}

// flatten turns a map into a sorted k1, v1, k2, v2 list.
func flatten(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, 2*len(m))
	for _, k := range keys {
		out = append(out, k, m[k])
	}
	return out
}

// GrantView is what a cub reads before running a grant.
type GrantView struct {
	Claim    *Claim
	Target   *Artefact
	Workflow *Workflow
	// ToolMemoryRev is the revision of the published tool memory (0: none
	// published), read in the same round trip so that a cub re-reads the
	// learnings and handbook only when they changed.
	ToolMemoryRev int64
	// SharedMemory is the workflow's shared memory document ("" when no
	// merge happened yet), read in the same round trip.
	SharedMemory string
	// Memories are the latest memories of the workflow's agents (agent →
	// document), read in the same round trip: what the tool receives as
	// memory.upstream.
	Memories map[string]StoredMemory
}

// ReadGrant reads a claim, its target artefact and its workflow in one
// pipelined round trip. Errors: ErrNotFound naming the missing record,
// ErrCorrupt.
func (c *Client) ReadGrant(ctx context.Context, claimID, artefactID, workflowID string) (*GrantView, error) {
	if err := validateIDs(claimID, artefactID, workflowID); err != nil {
		return nil, err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	cl := pipe.HGetAll(ctx, c.keys.Claim(claimID))
	art := pipe.HGetAll(ctx, c.keys.Artefact(artefactID))
	wf := pipe.HGetAll(ctx, c.keys.Workflow(workflowID))
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("blackboard: read grant %s: %w", claimID, err)
	}
	v := &GrantView{}
	var err error
	if v.Claim, err = DecodeClaim(cl.Val()); err != nil {
		return nil, fmt.Errorf("claim %s: %w", claimID, err)
	}
	if v.Target, err = DecodeArtefact(art.Val()); err != nil {
		return nil, fmt.Errorf("artefact %s: %w", artefactID, err)
	}
	if v.Workflow, err = DecodeWorkflow(wf.Val()); err != nil {
		return nil, fmt.Errorf("workflow %s: %w", workflowID, err)
	}
	return v, nil
}

// ConsensusSnapshot decodes the snapshot a bids_complete event carries:
// the claim and its bids as they were when the last expected bid was
// stored, and the workflow's status. ok is false when the event carries
// none (or it does not decode): read the state instead.
func ConsensusSnapshot(e Event) (st *ClaimState, ok bool) {
	raw := e.Field("snapshot")
	if raw == "" {
		return nil, false
	}
	var doc struct {
		Claim          map[string]string `json:"claim"`
		Bids           map[string]string `json:"bids"`
		WorkflowStatus string            `json:"workflow_status"`
	}
	if json.Unmarshal([]byte(raw), &doc) != nil {
		return nil, false
	}
	cl, err := DecodeClaim(doc.Claim)
	if err != nil {
		return nil, false
	}
	status := WorkflowStatus(doc.WorkflowStatus)
	if !status.Valid() {
		return nil, false
	}
	return &ClaimState{
		Claim:    cl,
		Workflow: &Workflow{ID: cl.WorkflowID, Status: status},
		Bids:     decodeBids(doc.Bids),
		Grants:   map[string]string{},
		Outputs:  map[string]string{},
		Failed:   map[string]bool{},
		NowMs:    e.TsMs,
	}, true
}

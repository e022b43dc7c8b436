package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/failpoint"
	"github.com/settdev/sett/internal/reviewpolicy"
)

// phase is one of the three bidding phases, in the order they run.
type phase int

const (
	phaseReview phase = iota
	phaseParallel
	phaseExclusive
	phaseCount
)

var phaseInfo = [phaseCount]struct {
	name   string
	bid    blackboard.Bid
	status blackboard.ClaimStatus
	grant  blackboard.GrantKind
}{
	{"review", blackboard.BidReview, blackboard.ClaimPendingReview, blackboard.GrantReview},
	{"parallel", blackboard.BidClaim, blackboard.ClaimPendingParallel, blackboard.GrantClaim},
	{"exclusive", blackboard.BidExclusive, blackboard.ClaimPendingExclusive, blackboard.GrantExclusive},
}

// phaseOf maps a granted status to its phase name (feedback claims have
// their own).
func phaseOf(s blackboard.ClaimStatus) string {
	for _, p := range phaseInfo {
		if p.status == s {
			return p.name
		}
	}
	if s == blackboard.ClaimPendingAssignment {
		return "feedback"
	}
	return string(s)
}

// leaseMargin is added to the lease TTL before a grant is checked, so that
// a lease taken a moment after the grant is never judged too early.
const leaseMargin = 500 * time.Millisecond

// ClaimAdvancer decides and applies the next step of one claim from its
// stored state. Every method is idempotent: it reads, decides, and writes
// with a compare-and-set, so running it twice, late, or concurrently with
// itself changes nothing the second time.
//
// Safe for concurrent use.
type ClaimAdvancer struct {
	bb     *blackboard.Client
	cfg    AdvancerConfig
	claims ClaimConfig
	dir    *AgentDirectory
	epoch  func() int64
	m      *Metrics
	log    zerolog.Logger
	// TimerArmedFunc tells the timer loop that a timer now fires in d.
	TimerArmedFunc func(d time.Duration)
	jitter         *jitter
	// LearningsChangedFunc runs after a new learning is recorded (it
	// publishes the learnings tools receive when no vault does); an error
	// makes the step run again, which records nothing twice.
	LearningsChangedFunc func(ctx context.Context) error
	// required and reviewers are consensusInput's Required and Reviewers,
	// read from the settings once rather than on every claim (they walk
	// every configured agent). Read-only.
	required, reviewers map[string]bool
	// plans are the bid plans consensus starts with, deciding rule bids
	// unless claims.AskRuleBids: the creator's claims and the approved
	// ones alike, so that one cache serves both (ClaimCreator uses it).
	plans *planCache
}

// AdvancerParams is what NewClaimAdvancer wires together.
type AdvancerParams struct {
	Client *blackboard.Client
	Config AdvancerConfig
	Claims ClaimConfig
	// Directory answers which agents are live.
	Directory *AgentDirectory
	// Epoch reports the leader epoch every write is made under.
	Epoch   func() int64
	Metrics *Metrics
	// Log has no component; the advancer adds its own.
	Log zerolog.Logger
}

// NewClaimAdvancer returns an advancer writing under the epoch p.Epoch
// reports.
func NewClaimAdvancer(p AdvancerParams) *ClaimAdvancer {
	required, reviewers := reviewerSets(p.Config.ReviewRoles, p.Claims.Rules)
	return &ClaimAdvancer{bb: p.Client, cfg: p.Config, claims: p.Claims, dir: p.Directory, epoch: p.Epoch, m: p.Metrics,
		log: p.Log.With().Str("component", "claim_advancer").Logger(), TimerArmedFunc: func(time.Duration) {}, jitter: newJitter(),
		LearningsChangedFunc: func(context.Context) error { return nil }, required: required, reviewers: reviewers,
		plans: newPlanCache(p.Directory, p.Claims.Rules, !p.Claims.AskRuleBids)}
}

// reviewerSets are the agents whose review is required, and the agents
// whose configured bid is review and who count toward min_reviews (not
// advisory).
func reviewerSets(roles map[string]reviewpolicy.Role, rules map[string]bidding.Rules) (required, reviewers map[string]bool) {
	required, reviewers = map[string]bool{}, map[string]bool{}
	for agent, role := range roles {
		if role.Required {
			required[agent] = true
		}
		if r, ok := rules[agent]; ok && r.Strategy == blackboard.BidReview && !role.Advisory {
			reviewers[agent] = true
		}
	}
	return required, reviewers
}

// errMovedOn reports that a compare-and-set found the claim already moved
// on: another handler took the step. The public methods turn it into nil.
var errMovedOn = errors.New("orchestrator: claim already moved on")

// settled reports whether err means the step needs no retry: it was taken
// by someone else, or the claim now waits in the scheduler (a freed slot
// or a resume wakes it).
func settled(err error) bool {
	return err == nil || errors.Is(err, errMovedOn) || errors.Is(err, blackboard.ErrWaiting)
}

// Advance applies the next step the claim's state calls for. checkLeases
// also looks for granted agents whose work lease expired (timers and the
// reconciler set it; events do not, to keep the hot path short).
func (a *ClaimAdvancer) Advance(ctx context.Context, claimID, workflowHint string, checkLeases bool) error {
	return a.advanceWith(ctx, claimID, workflowHint, checkLeases, nil)
}

// AdvanceResult handles a result (an artefact_created naming its claim):
// as Advance, reading the claim's target and this result with the claim
// in one round trip, so that a phase ending with it needs no second read.
// A queue entry without its target (written before target_id existed)
// reads as Advance does.
func (a *ClaimAdvancer) AdvanceResult(ctx context.Context, ev blackboard.Event) error {
	var ids []string
	if target := ev.Field("target_id"); target != "" && blackboard.ValidateID(ev.WorkflowID) == nil {
		ids = []string{target, ev.ArtefactID}
	}
	return a.advanceWith(ctx, ev.ClaimID, ev.WorkflowID, false, ids)
}

func (a *ClaimAdvancer) advanceWith(ctx context.Context, claimID, workflowHint string, checkLeases bool, phaseIDs []string) error {
	for try := 0; ; try++ {
		err := a.advanceRead(ctx, claimID, workflowHint, checkLeases, phaseIDs)
		// A retry reads afresh: what was read with the claim is stale.
		phaseIDs = nil
		// Another claim of the workflow merged into the shared memory
		// first: read again and merge on top of it.
		if errors.Is(err, blackboard.ErrStaleMemory) && try < 5 {
			continue
		}
		if !settled(err) {
			return err
		}
		return nil
	}
}

// AdvanceConsensus handles a bids_complete event: it resolves consensus
// from the snapshot the event carries, saving the state read on the hot
// path. The grant is a compare-and-set on the snapshot's rev, so a stale
// snapshot cannot apply; then, as without a snapshot or when the workflow
// is not running, it falls back to Advance on fresh state.
func (a *ClaimAdvancer) AdvanceConsensus(ctx context.Context, ev blackboard.Event) error {
	st, ok := blackboard.ConsensusSnapshot(ev)
	if ok && st.Claim.ID == ev.ClaimID && st.Claim.Status == blackboard.ClaimPendingConsensus &&
		st.Workflow.Status == blackboard.WorkflowRunning {
		err := a.consensus(ctx, st)
		if errors.Is(err, blackboard.ErrWaiting) {
			return nil
		}
		if !errors.Is(err, errMovedOn) {
			return err
		}
	}
	return a.Advance(ctx, ev.ClaimID, ev.WorkflowID, false)
}

// advanceRead reads the claim (with phaseIDs, artefacts the phase's end
// may need, when given) and applies the step its state calls for.
func (a *ClaimAdvancer) advanceRead(ctx context.Context, claimID, workflowHint string, checkLeases bool, phaseIDs []string) error {
	var st *blackboard.ClaimState
	var err error
	if phaseIDs != nil {
		st, err = a.bb.GetClaimStateAndPhase(ctx, claimID, workflowHint, phaseIDs)
	} else {
		st, err = a.bb.GetClaimState(ctx, claimID, workflowHint, nil)
	}
	if err != nil {
		if errors.Is(err, blackboard.ErrNotFound) {
			return nil // a claim we never created (or an operator deleted it)
		}
		return err
	}
	cl := st.Claim
	if cl.Status.Final() {
		return nil
	}
	if st.Workflow.Status != blackboard.WorkflowRunning && !cl.IsLearn() {
		reason := fmt.Sprintf("Terminated because workflow %s ended (%s): %s", blackboard.ShortID(cl.WorkflowID), st.Workflow.Status, st.Workflow.Outcome)
		return a.finish(ctx, st, blackboard.Transition{}, blackboard.ClaimTerminated, reason, false, "",
			a.event(blackboard.EventClaimTerminatedWorkflowEnded, cl, "", map[string]string{"reason": reason}))
	}
	switch cl.Status {
	case blackboard.ClaimPendingConsensus:
		return a.consensus(ctx, st)
	case blackboard.ClaimPendingApproval:
		return a.approval(ctx, st)
	case blackboard.ClaimPendingReview, blackboard.ClaimPendingParallel,
		blackboard.ClaimPendingExclusive, blackboard.ClaimPendingAssignment:
		return a.phase(ctx, st, checkLeases)
	default:
		a.log.Warn().Str("claim_id", cl.ID).Str("status", string(cl.Status)).Msg("claim status not handled by this orchestrator version")
		return nil
	}
}

// consensus applies the consensus rules (decideConsensus) to the claim:
// wait, grant the first phase with bidders, ask again for answers still
// needed, fail for answers that never came, or end the claim by
// configuration.
func (a *ClaimAdvancer) consensus(ctx context.Context, st *blackboard.ClaimState) error {
	cl := st.Claim
	d := decideConsensus(a.consensusInput(st))
	switch d.Step {
	case stepWait:
		return nil // the claim's timer fires at the deadline
	case stepAskAgain:
		return a.askAgain(ctx, st, d)
	case stepNoAnswer:
		return a.noAnswer(ctx, st, d.Missing)
	}
	var events []blackboard.Event
	if len(d.Silent) > 0 {
		events = append(events, a.event(blackboard.EventBidTimeout, cl, "", map[string]string{
			"agents": strings.Join(d.Silent, ","), "bid_timeout_ms": strconv.FormatInt(a.claims.BidTimeout.Milliseconds(), 10),
		}))
	}
	bids := make(map[string]blackboard.Bid, len(st.Bids)+len(d.Silent))
	for agent, b := range st.Bids {
		bids[agent] = b
	}
	for _, agent := range d.Silent {
		bids[agent] = blackboard.BidIgnore
	}
	if d.Step == stepEnd {
		return a.deadEnd(ctx, st, d, bids, events)
	}
	return a.grantFrom(ctx, st, phaseReview, bids, d.Silent, events, "")
}

// consensusInput gathers what decideConsensus reads from the claim, the
// configuration and the agents' liveness.
func (a *ClaimAdvancer) consensusInput(st *blackboard.ClaimState) consensusInput {
	cl := st.Claim
	in := consensusInput{
		Expected: cl.ExpectedBidders, Absent: cl.AbsentConsumers, Bids: st.Bids, Live: a.dir.IsLive,
		Required: a.required, Reviewers: a.reviewers, MinReviews: a.cfg.ReviewPolicy.MinReviews,
		NowMs: st.NowMs, DeadlineMs: cl.BidDeadlineMs, Rounds: cl.BidRounds, NoAnswerSinceMs: cl.NoAnswerSinceMs,
		BidTimeout: a.claims.BidTimeout, NoBidTimeout: a.cfg.NoBidTimeout,
	}
	if cl.ArtefactType != "" {
		in.Predicted = map[string]blackboard.Bid{}
		for _, agent := range append(append([]string(nil), cl.ExpectedBidders...), cl.AbsentConsumers...) {
			// Advisory reviewers never block: their silence is an ignore.
			if r, ok := a.claims.Rules[agent]; ok && !r.HasScript && !a.cfg.ReviewRoles[agent].Advisory {
				bid, _ := r.Fallback(cl.ArtefactType)
				in.Predicted[agent] = bid
			}
		}
	}
	return in
}

// askAgain sends the bid requests again to the agents whose answer is
// still needed (configured consumers that were down join the expected
// bidders when they are alive), and looks again after the round's delay.
func (a *ClaimAdvancer) askAgain(ctx context.Context, st *blackboard.ClaimState, d consensusDecision) error {
	cl := st.Claim
	since := cl.NoAnswerSinceMs
	if since == 0 {
		since = st.NowMs
	}
	// A bid request describes the artefact (cubs decide static bids from
	// it): read it; this path runs only past a bid deadline.
	target := bidTarget{ID: cl.ArtefactID, Type: cl.ArtefactType}
	if art, err := a.bb.GetArtefact(ctx, cl.ArtefactID); err == nil {
		target = bidTarget{ID: art.ID, Type: art.Type, StructuralType: art.StructuralType, ProducedByRole: art.ProducedByRole}
	} else if !errors.Is(err, blackboard.ErrNotFound) {
		return err
	}
	round := cl.BidRounds + 1
	t := blackboard.Transition{
		ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status, Rev: cl.Rev, To: cl.Status,
		Set: blackboard.ClaimPatch{ExpectedBidders: d.NewExpected, BidRounds: round, NoAnswerSinceMs: since,
			AwaitedAgents: d.Missing},
		BidTimeout: d.Delay,
		Inbox:      bidPlan{Bidders: d.Ask}.requests(cl.ID, cl.WorkflowID, target),
		Events: []blackboard.Event{a.event(blackboard.EventBidsRequestedAgain, cl, "", map[string]string{
			"agents": strings.Join(d.Missing, ","), "asked": strings.Join(d.Ask, ","), "round": strconv.Itoa(round),
			"waiting_ms": itoa64(st.NowMs - since), "no_bid_timeout_ms": itoa64(a.cfg.NoBidTimeout.Milliseconds()),
		})},
	}
	if _, err := a.transition(ctx, t); err != nil {
		return err
	}
	a.TimerArmedFunc(d.Delay)
	a.m.BidRounds.Inc()
	a.log.Warn().Str("claim_id", cl.ID).Str("workflow_id", cl.WorkflowID).Strs("waiting_for", d.Missing).
		Strs("asked", d.Ask).Int("round", round).Str("event", string(blackboard.EventBidsRequestedAgain)).
		Msg("configured agents have not answered; asking again")
	return nil
}

// noAnswer fails the claim (and its workflow) whose needed agents never
// answered within no_bid_timeout, naming them.
func (a *ClaimAdvancer) noAnswer(ctx context.Context, st *blackboard.ClaimState, missing []string) error {
	cl := st.Claim
	typ, err := a.artefactType(ctx, cl)
	if err != nil {
		return err
	}
	since := cl.NoAnswerSinceMs
	if since == 0 {
		since = st.NowMs
	}
	waited := a.claims.BidTimeout + time.Duration(st.NowMs-since)*time.Millisecond
	why := noAnswerReason(typ, missing, waited, a.dir.IsLive)
	reason := "Terminated: " + why + "."
	a.m.NoAnswer.Inc()
	return a.finish(ctx, st, blackboard.Transition{}, blackboard.ClaimTerminated, reason, true, why,
		a.event(blackboard.EventClaimTerminatedNoAnswer, cl, "", map[string]string{
			"reason": reason, "agents": strings.Join(missing, ","), "type": typ}))
}

// artefactType is the claimed artefact's type: recorded on the claim, or
// read from the artefact for claims stored before it was ("" when the
// artefact is gone).
func (a *ClaimAdvancer) artefactType(ctx context.Context, cl *blackboard.Claim) (string, error) {
	if cl.ArtefactType != "" {
		return cl.ArtefactType, nil
	}
	art, err := a.bb.GetArtefact(ctx, cl.ArtefactID)
	switch {
	case err == nil:
		return art.Type, nil
	case errors.Is(err, blackboard.ErrNotFound):
		return "", nil
	}
	return "", err
}

// deadEnd ends a claim no agent takes: by configuration (no configured
// agent consumes its type) or because every consumer answered ignore. A
// goal's claim fails its workflow (nothing was done); any other claim
// completes, and the note goes into the workflow's outcome.
func (a *ClaimAdvancer) deadEnd(ctx context.Context, st *blackboard.ClaimState, d consensusDecision, bids map[string]blackboard.Bid, events []blackboard.Event) error {
	cl := st.Claim
	a.countBids(bids, len(d.Silent))
	a.m.ConsensusLatency.Observe(msToSeconds(st.NowMs - cl.CreatedAtMs))
	if cl.ArtefactID == cl.WorkflowID {
		return a.goalDeadEnd(ctx, st, d, events)
	}
	typ, err := a.artefactType(ctx, cl)
	if err != nil {
		return err
	}
	var decliners []string
	for _, agent := range append(append([]string(nil), cl.ExpectedBidders...), cl.AbsentConsumers...) {
		if !contains(decliners, agent) {
			decliners = append(decliners, agent)
		}
	}
	sort.Strings(decliners)
	note := chainEndNote(typ, d.Declined, decliners)
	reason := "Chain ends here by configuration: " + note + "."
	kind := "no_consumer"
	if d.Declined {
		kind = "declined"
	}
	a.m.DeadEnds.WithLabelValues(kind).Inc()
	t := blackboard.Transition{IgnoreBids: d.Silent, ChainEnd: note}
	return a.finish(ctx, st, t, blackboard.ClaimComplete, reason, false, "",
		append(events, a.event(blackboard.EventClaimCompleted, cl, "", map[string]string{"reason": reason, "chain_end": kind}))...)
}

// grantFrom grants the first phase at or after p that has bidders, or
// completes the claim when none is left; a non-empty decision records the
// review stage's decision on the claim.
func (a *ClaimAdvancer) grantFrom(ctx context.Context, st *blackboard.ClaimState, p phase, bids map[string]blackboard.Bid, silent []string, events []blackboard.Event, decision string) error {
	cl := st.Claim
	if p, agents, ok := nextPhase(p, bids); ok {
		info := phaseInfo[p]
		t := blackboard.Transition{
			ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status, Rev: cl.Rev, To: info.status,
			Set:        blackboard.ClaimPatch{Attempts: 1, ReviewDecision: decision},
			IgnoreBids: silent, Grants: map[string]string{},
			ArmTimer: true, TimerIn: a.claims.LeaseTTL + leaseMargin,
			Gate: a.gate(),
			Events: append(events, a.event(blackboard.EventClaimGranted, cl, "", map[string]string{
				"phase": info.name, "agents": strings.Join(agents, ","),
			})),
		}
		switch p {
		case phaseReview:
			// Issue 28: the cluster's gate reviewers review first; the
			// others only when every gate passed.
			all := agents
			agents = firstReviewers(agents, a.cfg.ReviewClusters.For(cl.ArtefactType).Policy.Gate)
			if len(agents) < len(all) {
				t.Events[len(t.Events)-1].Fields["agents"] = strings.Join(agents, ",")
				var held []string
				for _, r := range all {
					if !contains(agents, r) {
						held = append(held, r)
					}
				}
				t.Events[len(t.Events)-1].Fields["held_until_gate"] = strings.Join(held, ",")
			}
			t.Set.GrantedReviewAgents = agents
		case phaseParallel:
			t.Set.GrantedParallelAgents = agents
		default:
			t.Set.GrantedExclusiveAgent = agents[0]
		}
		for _, agent := range agents {
			t.Grants[agent] = "1"
			t.Inbox = append(t.Inbox, a.grantMessage(cl, agent, info.grant, "1"))
		}
		res, err := a.transition(ctx, t)
		if err != nil {
			return err
		}
		if res.Waited > 0 {
			a.m.QueueWait.Observe(res.Waited.Seconds())
		}
		failpoint.Hit("granted-" + info.name)
		if cl.Status == blackboard.ClaimPendingConsensus {
			a.countBids(bids, len(silent))
			a.m.ConsensusLatency.Observe(msToSeconds(st.NowMs - cl.CreatedAtMs))
		}
		a.m.Grants.WithLabelValues(info.name).Add(float64(len(agents)))
		a.log.Info().Str("claim_id", cl.ID).Str("workflow_id", cl.WorkflowID).Str("phase", info.name).
			Strs("agents", agents).Msg("claim granted")
		return nil
	}
	// No later phase has bidders: the phases that ran are all done.
	t := blackboard.Transition{IgnoreBids: silent, Set: blackboard.ClaimPatch{ReviewDecision: decision}}
	return a.finish(ctx, st, t, blackboard.ClaimComplete, allPhasesComplete, false, "",
		append(events, a.event(blackboard.EventClaimCompleted, cl, "", map[string]string{"reason": allPhasesComplete}))...)
}

// goalDeadEnd ends a workflow whose goal no agent takes by configuration
// (no configured agent consumes its type, or every consumer answered
// ignore): nothing was done, so it fails, with a reason naming the goal's
// type and what to change, and never "completes". A goal whose consumers
// did not answer is not a dead end: consensus asks them again.
func (a *ClaimAdvancer) goalDeadEnd(ctx context.Context, st *blackboard.ClaimState, d consensusDecision, events []blackboard.Event) error {
	cl := st.Claim
	typ, err := a.artefactType(ctx, cl)
	if err != nil {
		return err
	}
	if typ == "" {
		typ = "unknown"
	}
	why := fmt.Sprintf("no agent bid on the goal (type %s): no configured agent consumes %s; add one to sett.yml", typ, typ)
	if d.Declined {
		why = fmt.Sprintf("no agent bid on the goal (type %s): every agent that could take it answered ignore (%s)",
			typ, strings.Join(append(append([]string(nil), cl.ExpectedBidders...), cl.AbsentConsumers...), ", "))
	}
	reason := "Terminated: " + why + "."
	t := blackboard.Transition{IgnoreBids: d.Silent}
	return a.finish(ctx, st, t, blackboard.ClaimTerminated, reason, true, why,
		append(events, a.event(blackboard.EventClaimTerminatedNoBids, cl, "", map[string]string{"reason": reason, "type": typ}))...)
}

// phase waits until every granted agent delivered, then moves on: merges
// the agents' memories into the workflow's shared memory, judges reviews
// by the review policy, advances to the next phase, or completes. A
// failed tool is retried by its agent's policy; when it has no attempt
// left the claim ends (a reviewer's failure counts as a failed review
// instead, for the policy to weigh).
func (a *ClaimAdvancer) phase(ctx context.Context, st *blackboard.ClaimState, checkLeases bool) error {
	cl := st.Claim
	granted := cl.GrantedAgents()
	var missing, failed []string
	for _, agent := range granted {
		if reviewSkipped(st, agent) {
			continue // an advisory reviewer past its deadline
		}
		if st.Failed[agent] && !cl.IsLearn() {
			failed = append(failed, agent)
			continue
		}
		if _, ok := st.Outputs[agent]; !ok {
			missing = append(missing, agent)
		}
	}
	if len(failed) > 0 {
		exhausted, arts, progressed, err := a.failures(ctx, st, failed)
		switch {
		case err != nil:
			return err
		case len(exhausted) > 0:
			return a.escalate(ctx, st, exhausted, arts)
		case progressed:
			// The claim changed (a retry stored, or a reviewer's failure
			// made final): decide again from its new state.
			return a.advanceRead(ctx, cl.ID, cl.WorkflowID, false, nil)
		}
		for _, agent := range failed {
			if !cl.Retries[agent].Final {
				return nil // a retry is still to come
			}
		}
	}
	if len(missing) > 0 {
		// Issue 28: an advisory reviewer never delays the decision beyond
		// its own deadline.
		var deadline time.Duration
		if cl.Status == blackboard.ClaimPendingReview {
			w, err := a.advisoryWaitOf(ctx, st, missing)
			if err != nil {
				return err
			}
			if len(w.Skip) > 0 {
				return a.skipAdvisory(ctx, st, w.Skip)
			}
			deadline = w.Next
		}
		if checkLeases {
			return a.checkLeases(ctx, st, missing, deadline)
		}
		if deadline > 0 {
			return a.rearm(ctx, cl, min(deadline+leaseMargin, a.claims.LeaseTTL+leaseMargin))
		}
		return nil
	}
	if cl.IsLearn() {
		return a.learnPhase(ctx, st)
	}
	a.m.PhaseLatency.WithLabelValues(phaseOf(cl.Status)).Observe(msToSeconds(st.NowMs - cl.UpdatedAtMs))
	var delivered []string
	for _, agent := range granted {
		if !reviewSkipped(st, agent) {
			delivered = append(delivered, agent)
		}
	}
	b, err := a.boundary(ctx, st, delivered)
	if err != nil {
		return err
	}
	switch cl.Status {
	case blackboard.ClaimPendingReview:
		return a.reviewOutcome(ctx, b)
	case blackboard.ClaimPendingParallel:
		if err := a.mergeMemory(ctx, b, nil); err != nil {
			return err
		}
		return a.grantFrom(ctx, st, phaseExclusive, st.Bids, nil, nil, "")
	case blackboard.ClaimPendingAssignment:
		if err := a.mergeMemory(ctx, b, nil); err != nil {
			return err
		}
		out := b.outputs[cl.GrantedExclusiveAgent]
		reason := fmt.Sprintf("Rework delivered as version %d: [%s]", out.Version, out.ID)
		return a.finish(ctx, st, blackboard.Transition{}, blackboard.ClaimComplete, reason, false, "",
			a.event(blackboard.EventArtefactReworked, cl, cl.GrantedExclusiveAgent, map[string]string{
				"artefact_id": out.ID, "logical_id": out.LogicalID, "version": strconv.Itoa(out.Version),
				"iteration": strconv.Itoa(cl.Iteration), "previous_id": cl.ArtefactID,
			}),
			a.event(blackboard.EventClaimCompleted, cl, "", map[string]string{"reason": reason}))
	default:
		if err := a.mergeMemory(ctx, b, nil); err != nil {
			return err
		}
		reason := allPhasesComplete
		return a.finish(ctx, st, blackboard.Transition{}, blackboard.ClaimComplete, reason, false, "",
			a.event(blackboard.EventClaimCompleted, cl, "", map[string]string{"reason": reason}))
	}
}

// checkLeases re-grants (or gives up on) granted agents whose work lease
// is gone, and re-arms the claim's timer otherwise. A grant counts from
// its delivery to the agent's inbox: one still waiting for an agent slot
// is not lost, and its delivery re-arms the timer.
//
// within, when positive, is when an advisory reviewer's deadline passes:
// the claim's timer fires no later than that.
func (a *ClaimAdvancer) checkLeases(ctx context.Context, st *blackboard.ClaimState, missing []string, within time.Duration) error {
	cl := st.Claim
	grantAge := time.Duration(st.NowMs-cl.UpdatedAtMs) * time.Millisecond
	if grantAge < a.claims.LeaseTTL {
		next := a.claims.LeaseTTL - grantAge + leaseMargin
		if within > 0 {
			next = min(next, within+leaseMargin)
		}
		return a.rearm(ctx, cl, next)
	}
	live, err := a.bb.GetClaimState(ctx, cl.ID, cl.WorkflowID, missing)
	if err != nil {
		return err
	}
	if live.Claim.Rev != cl.Rev {
		return nil // moved on meanwhile; its own event handles it
	}
	var lost, handedBack []string
	next := time.Duration(-1)
	for _, agent := range missing {
		delivered, ok := live.DeliveredAtMs[agent]
		if !ok {
			continue // queued behind the agent's capacity
		}
		age := time.Duration(live.NowMs-delivered) * time.Millisecond
		switch {
		case !live.LiveLeases[agent] && grantHandedBack(live.HandedBack[agent], live.Grants[agent], cl.HandBacks):
			handedBack = append(handedBack, agent)
		case live.LiveLeases[agent]:
			// Look again right when the lease would expire unrenewed: a
			// cub cut off mid-tool loses its grant one lease TTL after its
			// last renewal (plus the margin), long before a sibling replica
			// would reclaim the grant's idle inbox entry (two TTLs).
			left := live.LeaseLeft[agent]
			if left <= 0 {
				left = a.claims.LeaseTTL
			}
			next = minPositive(next, left+leaseMargin)
		case age < a.claims.LeaseTTL:
			next = minPositive(next, a.claims.LeaseTTL-age+leaseMargin)
		default:
			lost = append(lost, agent)
		}
	}
	if len(lost) == 0 && len(handedBack) > 0 {
		return a.grantAgain(ctx, cl, handedBack)
	}
	lost = append(lost, handedBack...) // with a lost one, all count as lost
	if within > 0 {
		next = minPositive(next, within+leaseMargin)
	}
	if len(lost) == 0 {
		if next < 0 {
			return nil // every missing grant is queued; its delivery arms the timer
		}
		return a.rearm(ctx, cl, next)
	}
	a.m.LeasesLost.Add(float64(len(lost)))
	if cl.Attempts >= a.cfg.MaxGrantAttempts && cl.IsLearn() {
		return a.learnFallback(ctx, st, fmt.Sprintf("the learner %s delivered nothing after %d grant attempts", strings.Join(lost, ", "), cl.Attempts))
	}
	if cl.Attempts >= a.cfg.MaxGrantAttempts {
		reason := fmt.Sprintf("Terminated: no result from %s after %d grant attempts (work lease lost each time).",
			strings.Join(lost, ", "), cl.Attempts)
		return a.finish(ctx, st, blackboard.Transition{}, blackboard.ClaimTerminated, reason, true, reason,
			a.event(blackboard.EventClaimTerminatedLeaseExhausted, cl, "", map[string]string{
				"reason": reason, "agents": strings.Join(lost, ","), "attempts": strconv.Itoa(cl.Attempts),
			}))
	}
	attempt := cl.Attempts + 1
	token := strconv.Itoa(attempt)
	t := a.regrant(cl, lost, token, blackboard.ClaimPatch{Attempts: attempt}, blackboard.EventLeaseLost,
		map[string]string{"attempt": token, "max_attempts": strconv.Itoa(a.cfg.MaxGrantAttempts)})
	a.log.Warn().Str("claim_id", cl.ID).Strs("agents", lost).Int("attempt", attempt).Msg("work lease lost; granting again")
	_, err = a.transition(ctx, t)
	return err
}

// maxHandBacks bounds how often a claim's grants may be handed back
// without counting an attempt: a cub that keeps draining (a crash loop
// dressed as rollouts) must not keep a claim alive forever.
const maxHandBacks = 10

// grantHandedBack reports whether a grant whose lease is gone was given
// back on purpose: the hand-back mark names the current grant token (a
// mark of an older grant says nothing of this one) and the claim has not
// used up its hand-backs.
func grantHandedBack(mark, current string, handBacks int) bool {
	return mark != "" && mark == current && handBacks < maxHandBacks
}

// grantAgain grants the work of agents whose draining cubs handed it back
// under a new token (so the old grant is stale) and the same attempt
// number: nothing about the work failed.
func (a *ClaimAdvancer) grantAgain(ctx context.Context, cl *blackboard.Claim, agents []string) error {
	n := cl.HandBacks + 1
	token := fmt.Sprintf("%d.%d", cl.Attempts, n)
	t := a.regrant(cl, agents, token, blackboard.ClaimPatch{HandBacks: n}, blackboard.EventGrantHandedBack,
		map[string]string{"token": token, "handbacks": strconv.Itoa(n)})
	a.m.GrantsHandedBack.Add(float64(len(agents)))
	a.log.Info().Str("claim_id", cl.ID).Strs("agents", agents).Str("token", token).Msg("grant handed back by a draining cub; granting again without counting an attempt")
	_, err := a.transition(ctx, t)
	return err
}

// regrant is the transition that grants the claim's current work again
// to agents under token, with patch and one event of type ev (fields
// copied per agent) each, the lease check armed.
func (a *ClaimAdvancer) regrant(cl *blackboard.Claim, agents []string, token string, patch blackboard.ClaimPatch, ev blackboard.EventType, fields map[string]string) blackboard.Transition {
	t := blackboard.Transition{
		ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status, Rev: cl.Rev, To: cl.Status,
		Set: patch, Grants: map[string]string{},
		ArmTimer: true, TimerIn: a.claims.LeaseTTL + leaseMargin,
		Gate: a.gate(),
	}
	kind := cl.GrantKind()
	for _, agent := range agents {
		t.Grants[agent] = token
		t.Inbox = append(t.Inbox, a.grantMessage(cl, agent, kind, token))
		t.Events = append(t.Events, a.event(ev, cl, agent, maps.Clone(fields)))
	}
	return t
}

// gate is the scheduler gate of a granting step of a regular claim.
func (a *ClaimAdvancer) gate() *blackboard.GlobalGate {
	return &blackboard.GlobalGate{Limit: a.claims.MaxConcurrentClaims, Check: true, Counts: true}
}

// minPositive returns the smaller of a and b, where a negative a means
// "none yet".
func minPositive(a, b time.Duration) time.Duration {
	if a < 0 || b < a {
		return b
	}
	return a
}

func (a *ClaimAdvancer) rearm(ctx context.Context, cl *blackboard.Claim, in time.Duration) error {
	now, err := a.bb.Now(ctx)
	if err != nil {
		return err
	}
	if err := a.bb.ArmTimer(ctx, cl.ID, now+in.Milliseconds()); err != nil {
		return err
	}
	a.TimerArmedFunc(in)
	return nil
}

// finish moves a claim to a final status with what t adds (zero for
// nothing), closing its workflow item.
func (a *ClaimAdvancer) finish(ctx context.Context, st *blackboard.ClaimState, t blackboard.Transition, to blackboard.ClaimStatus, reason string, failWorkflow bool, failReason string, events ...blackboard.Event) error {
	cl := st.Claim
	t.ClaimID, t.WorkflowID, t.From, t.Rev, t.To = cl.ID, cl.WorkflowID, cl.Status, cl.Rev, to
	if to == blackboard.ClaimTerminated {
		t.Set.TerminationReason = reason
	} else {
		t.Set.CompletionReason = reason
	}
	// A learn claim holds no item of its workflow (see advancer_learning.go).
	t.CloseItem = !cl.IsLearn()
	// The grants of the current phase end with the claim: their slots go
	// to waiting grants and their leases are deleted, so a tool still
	// running (a cancelled workflow) is stopped by its cub.
	t.Release = cl.GrantedAgents()
	t.FailWorkflow, t.FailReason = failWorkflow, failReason
	t.Events = append(t.Events, events...)
	// A workflow this step completes is counted here rather than read
	// back from the queue (a failed one still is: its claims must end).
	t.CountEnd = true
	res, err := a.transition(ctx, t)
	if err != nil {
		return err
	}
	if res.Ended {
		a.m.WorkflowsEnded.WithLabelValues(string(blackboard.WorkflowCompleted)).Inc()
	}
	a.m.ClaimsFinished.WithLabelValues(string(to)).Inc()
	ev := a.log.Info()
	if to == blackboard.ClaimTerminated {
		ev = a.log.Warn()
	}
	ev = ev.Str("claim_id", cl.ID).Str("workflow_id", cl.WorkflowID).Str("status", string(to)).Str("reason", reason)
	for _, e := range events {
		// The specific event (artefact_reworked, claim_terminated_*) names
		// the line so that log searches find the same words as the stream.
		if e.Type != blackboard.EventClaimCompleted && e.Type != blackboard.EventReviewRejected {
			ev = ev.Str("event", string(e.Type))
		}
	}
	ev.Msg("claim finished")
	return nil
}

// allPhasesComplete is the completion reason of a claim whose phases all
// ended; create_artefact.lua writes the same words when a result
// completes its claim.
const allPhasesComplete = "All phases complete."

// CompletedByResult counts and logs a claim its result completed in its
// own script (a claim_completed_by_result entry), as finish does for the
// claims the orchestrator completes: nothing is left to write.
func (a *ClaimAdvancer) CompletedByResult(ev blackboard.Event) {
	if ms, err := strconv.ParseInt(ev.Field("phase_ms"), 10, 64); err == nil && ms >= 0 {
		a.m.PhaseLatency.WithLabelValues(phaseOf(blackboard.ClaimPendingExclusive)).Observe(msToSeconds(ms))
	}
	a.m.ClaimsFinished.WithLabelValues(string(blackboard.ClaimComplete)).Inc()
	if ev.Field("ended") == "1" {
		a.m.WorkflowsEnded.WithLabelValues(string(blackboard.WorkflowCompleted)).Inc()
	}
	a.log.Info().Str("claim_id", ev.ClaimID).Str("workflow_id", ev.WorkflowID).Str("status", string(blackboard.ClaimComplete)).
		Str("reason", allPhasesComplete).Str("completed_by", "result").Msg("claim finished")
}

// transition applies t under the current epoch. A stale status means
// another handler already took this step: errMovedOn, which the public
// methods treat as done.
func (a *ClaimAdvancer) transition(ctx context.Context, t blackboard.Transition) (blackboard.TransitionResult, error) {
	t.Epoch = a.epoch()
	res, err := a.bb.TransitionClaim(ctx, t)
	if errors.Is(err, blackboard.ErrStaleStatus) {
		a.log.Debug().Str("claim_id", t.ClaimID).Msg("claim already moved on; skipping")
		return res, errMovedOn
	}
	if errors.Is(err, blackboard.ErrWaiting) {
		a.log.Debug().Str("claim_id", t.ClaimID).Err(err).Msg("grant waits for the scheduler")
		return res, err
	}
	if err == nil && t.ArmTimer {
		a.TimerArmedFunc(t.TimerIn)
	}
	return res, err
}

// grantMessage is the grant of cl to agent; it says which attempt of the
// agent's retry policy this is (the first, unless the caller says more).
func (a *ClaimAdvancer) grantMessage(cl *blackboard.Claim, agent string, kind blackboard.GrantKind, token string) blackboard.InboxMessage {
	attempt := 1
	if rs, ok := cl.Retries[agent]; ok {
		attempt = rs.Failed + 1
	}
	return blackboard.InboxMessage{Agent: agent, Kind: blackboard.MessageGrant, ClaimID: cl.ID,
		ArtefactID: cl.ArtefactID, WorkflowID: cl.WorkflowID, Grant: kind, Token: token,
		Attempt: attempt, MaxAttempts: a.claims.retryPolicy(agent, kind).Attempts()}
}

func (a *ClaimAdvancer) event(t blackboard.EventType, cl *blackboard.Claim, agent string, fields map[string]string) blackboard.Event {
	e := blackboard.Event{Type: t, WorkflowID: cl.WorkflowID, ClaimID: cl.ID, ArtefactID: cl.ArtefactID, Agent: agent, Fields: fields}
	if id, ok := fields["artefact_id"]; ok {
		e.ArtefactID = id
		delete(fields, "artefact_id")
	}
	return e
}

func (a *ClaimAdvancer) countBids(bids map[string]blackboard.Bid, timedOut int) {
	for _, b := range bids {
		a.m.Bids.WithLabelValues(string(b)).Inc()
	}
	a.m.BidTimeouts.Add(float64(timedOut))
}

func msToSeconds(ms int64) float64 {
	if ms < 0 {
		return 0
	}
	return float64(ms) / 1000
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// oneLine joins the lines of s with single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// msDuration renders a span of milliseconds for people.
func msDuration(ms int64) time.Duration {
	return (time.Duration(ms) * time.Millisecond).Round(time.Second)
}

package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/failpoint"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/reviewpolicy"
)

// phaseBoundary is what the orchestrator reads when every granted agent
// of a phase has delivered: the target, the results (with the memories
// they carry) and the workflow's shared memory they merge into.
type phaseBoundary struct {
	st      *blackboard.ClaimState
	target  *blackboard.Artefact
	outputs map[string]*blackboard.Artefact
	// shared and rev are the stored shared memory; sharedOK is false when
	// it does not decode (the merge is then skipped, never the work).
	shared   memory.SharedMemory
	rev      int64
	sharedOK bool
	// step labels this phase in the shared memory ("review of Plan v2").
	step string
}

// boundary reads a phase's end in one round trip.
func (a *ClaimAdvancer) boundary(ctx context.Context, st *blackboard.ClaimState, granted []string) (*phaseBoundary, error) {
	cl := st.Claim
	ids := []string{cl.ArtefactID}
	for _, agent := range granted {
		ids = append(ids, st.Outputs[agent])
	}
	arts, doc, rev, ok := prefetched(st.Phase, ids)
	if !ok {
		var err error
		if arts, doc, rev, err = a.bb.ReadPhase(ctx, cl.WorkflowID, ids); err != nil {
			return nil, err
		}
	}
	if arts[0] == nil {
		return nil, fmt.Errorf("orchestrator: claim %s: target artefact %s is missing", cl.ID, cl.ArtefactID)
	}
	b := &phaseBoundary{st: st, target: arts[0], outputs: make(map[string]*blackboard.Artefact, len(granted)), rev: rev}
	for i, agent := range granted {
		if arts[i+1] == nil {
			return nil, fmt.Errorf("orchestrator: claim %s: output %s of %s does not exist", cl.ID, ids[i+1], agent)
		}
		b.outputs[agent] = arts[i+1]
	}
	var err error
	b.shared, err = memory.DecodeShared([]byte(doc))
	if err != nil {
		a.log.Warn().Err(err).Str("workflow_id", cl.WorkflowID).Msg("the shared memory does not decode; this phase is not merged into it")
	} else {
		b.sharedOK = true
	}
	b.step = fmt.Sprintf("%s of %s v%d", phaseOf(cl.Status), b.target.Type, b.target.Version)
	return b, nil
}

// prefetched returns the phase's artefacts from what was read with the
// claim, when every one of ids was (a phase of one agent ending with the
// result that woke the orchestrator); ok is false otherwise.
func prefetched(ph *blackboard.PhaseRead, ids []string) (arts []*blackboard.Artefact, doc string, rev int64, ok bool) {
	if ph == nil {
		return nil, "", 0, false
	}
	arts = make([]*blackboard.Artefact, len(ids))
	for i, id := range ids {
		a, read := ph.Artefacts[id]
		if !read {
			return nil, "", 0, false
		}
		arts[i] = a
	}
	return arts, ph.SharedDoc, ph.SharedRev, true
}

// mergeMemory merges the phase's memories into the shared memory, with
// update (a review decision) when given, in one compare-and-set write.
// Both are idempotent (contributions and updates carry ids), so a repeat
// after a crash writes nothing. ErrStaleMemory (another claim of the
// workflow merged first) makes the caller read again; any other failure
// is logged and the work goes on (a failed merge never blocks).
func (a *ClaimAdvancer) mergeMemory(ctx context.Context, b *phaseBoundary, update *memory.Update) error {
	if !b.sharedOK {
		return nil
	}
	cl := b.st.Claim
	var batch []memory.Contribution
	for agent, out := range b.outputs {
		m, ok := agentMemory(out)
		if !ok || out.StructuralType == blackboard.StructuralFailure {
			continue
		}
		batch = append(batch, memory.Contribution{ID: out.ID, Agent: agent, Step: b.step, CreatedAtMs: out.CreatedAtMs, Memory: *m})
	}
	merged, changed := memory.Merge(b.shared, batch)
	if update != nil {
		var added bool
		merged, added = memory.AddUpdate(merged, *update)
		changed = changed || added
	}
	if !changed {
		return nil
	}
	err := a.bb.WriteSharedMemory(ctx, blackboard.WriteSharedMemoryParams{WorkflowID: cl.WorkflowID, ClaimID: cl.ID,
		Doc: string(merged.Encode()), ExpectRev: b.rev, Epoch: a.epoch()})
	switch {
	case err == nil:
		a.m.MemoryMerges.Inc()
		return nil
	case errors.Is(err, blackboard.ErrStaleMemory):
		return err
	case errors.Is(err, blackboard.ErrFenced):
		return err
	}
	a.log.Warn().Err(err).Str("claim_id", cl.ID).Str("workflow_id", cl.WorkflowID).Msg("merging the memories failed; going on without")
	return nil
}

// agentMemory decodes the memory an artefact carries.
func agentMemory(a *blackboard.Artefact) (*memory.AgentMemory, bool) {
	if a == nil || a.Memory == "" {
		return nil, false
	}
	var m memory.AgentMemory
	if json.Unmarshal([]byte(a.Memory), &m) != nil {
		return nil, false
	}
	return &m, true
}

// reviewOutcome decides a finished review phase by the review policy:
// the decision is recorded (a review_decision event, the
// claim's review_decision, the shared memory's Recent Updates) before it
// is acted on — proceed to the next phase, rework, or fail.
func (a *ClaimAdvancer) reviewOutcome(ctx context.Context, b *phaseBoundary) error {
	st := b.st
	cl := st.Claim
	reviews := make([]reviewpolicy.Review, 0, len(cl.GrantedReviewAgents))
	verdicts := map[string]reviewpolicy.Verdict{}
	errored, retried := map[string]bool{}, map[string]bool{}
	for _, agent := range cl.GrantedReviewAgents {
		role := a.cfg.ReviewRoles[agent]
		r := reviewpolicy.Review{Agent: agent, Role: role, State: reviewpolicy.StateDelivered}
		out := b.outputs[agent]
		switch {
		case reviewSkipped(st, agent):
			r.State = reviewpolicy.StateSkipped
		case st.Failed[agent]:
			r.State = reviewpolicy.StateFailed
		default:
			m, _ := agentMemory(out)
			r.Verdict = reviewpolicy.Judge(out.Payload, m)
			verdicts[agent] = r.Verdict
			errored[agent] = r.Verdict.Status == memory.StatusError && a.cfg.advisoryDeadline(agent) == 0
		}
		retried[agent] = len(cl.Retries[agent].ErrorAnswers) > 0
		reviews = append(reviews, r)
	}
	// Issue 28: the cluster of the target's type decides, with its own
	// revision limit and at_limit rule.
	cluster := a.cfg.ReviewClusters.For(b.target.Type)
	d := reviewpolicy.Decide(cluster.Policy, reviews)
	// Issue 28: an answered ERROR is asked once more; the reviewers held
	// back while the gate reviewers reviewed are asked when every gate
	// passed, and never when a gate decided.
	stage := nextReviewStep(reviewStageInput{Bidders: reviewBidders(st.Bids), Granted: cl.GrantedReviewAgents,
		Errored: errored, Retried: retried, Gated: d.Gated()})
	switch stage.Step {
	case reviewAskAgain:
		return a.askAgainAfterError(ctx, b, stage.Agents)
	case reviewGrantRest:
		return a.grantAfterGate(ctx, b, stage.Agents)
	case reviewGateDecided:
		for _, agent := range stage.Agents {
			reviews = append(reviews, reviewpolicy.Review{Agent: agent, Role: a.cfg.ReviewRoles[agent], State: reviewpolicy.StateSkipped})
		}
		d = reviewpolicy.Decide(cluster.Policy, reviews)
	}
	d = cluster.ApplyLimit(d, b.target.Version-1, cluster.RevisionLimit(a.cfg.MaxReviewIterations))
	if cluster.Replans(d) {
		n, err := a.replansSoFar(ctx, cl.WorkflowID, cluster.Name, cl.ID)
		if err != nil {
			return err
		}
		d = cluster.ApplyOnError(d, n)
	}
	line := d.Line()
	read, _ := json.Marshal(d.ReviewsRead)
	decision := a.event(blackboard.EventReviewDecision, cl, "", map[string]string{
		"outcome": string(d.Outcome), "rule": string(d.Rule), "reason": d.Reason, "reviews": string(read),
		"severities": strings.Join(d.SeveritiesSeen, ","), "rejecting": strings.Join(d.Rejecting, ","),
		"contract_gaps": strings.Join(d.ContractGaps, " | "), "target_version": strconv.Itoa(b.target.Version),
		"cluster": cluster.Name, "warning": strconv.FormatBool(d.Warning),
	})
	update := &memory.Update{Key: "review_decision:" + cl.ID, Agent: "orchestrator", Step: b.step, Text: line}
	if err := a.mergeMemory(ctx, b, update); err != nil {
		return err
	}
	failpoint.Hit("review-merged")
	a.m.ReviewDecisions.WithLabelValues(string(d.Outcome)).Inc()
	a.log.Info().Str("claim_id", cl.ID).Str("workflow_id", cl.WorkflowID).Str("outcome", string(d.Outcome)).
		Str("rule", string(d.Rule)).Str("event", string(blackboard.EventReviewDecision)).Msg(line)
	switch d.Outcome {
	case reviewpolicy.OutcomeProceed:
		events := []blackboard.Event{decision}
		for _, agent := range cl.GrantedReviewAgents {
			if v, ok := verdicts[agent]; ok && v.Approves() {
				events = append(events, a.event(blackboard.EventReviewApproved, cl, agent, map[string]string{"review_id": b.outputs[agent].ID}))
			}
		}
		return a.grantFrom(ctx, st, phaseParallel, st.Bids, nil, events, line)
	case reviewpolicy.OutcomeRework:
		var rejections []*blackboard.Artefact
		for _, agent := range d.Rejecting {
			if out := b.outputs[agent]; out != nil && !st.Failed[agent] {
				rejections = append(rejections, out)
			}
		}
		return a.rework(ctx, st, b.target, rejections, line, decision)
	case reviewpolicy.OutcomeReplan:
		return a.replan(ctx, b, cluster, d, decision)
	default:
		reason := "Terminated by the review policy: " + d.Reason
		t := blackboard.Transition{Set: blackboard.ClaimPatch{ReviewDecision: line}}
		return a.finish(ctx, st, t, blackboard.ClaimTerminated, reason, true, d.Reason, decision,
			a.event(blackboard.EventClaimTerminated, cl, "", map[string]string{"reason": reason, "rule": string(d.Rule)}))
	}
}

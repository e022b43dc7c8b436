package orchestrator

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/failpoint"
	"github.com/settdev/sett/internal/reviewpolicy"
	"github.com/settdev/sett/internal/textcut"
)

// Replans (issue 28, review_clusters.<name>.on_error: replan): a review
// phase its cluster fails for want of usable reviews sends the work back
// to the producer of an upstream artefact (the Plan a CodeChange was built
// from), in a feedback claim on that artefact's latest version holding
// the phase's reviews (and so their authors' memories) as feedback. The
// reworked version goes through its own review and the pipeline again.
// A workflow's cluster replans at most max_replans times; then the work
// proceeds with a warning (Cluster.ApplyOnError).
//
// The replan feedback claim's id derives from the failed claim, so a
// retry after a crash finds it (ErrExists) and goes on; its
// review_decision starts with replanMark, which is how the replans so far
// are counted.

// maxReplanDepth bounds the walk up the sources for the replan type.
const maxReplanDepth = 16

// replanMark starts the review_decision of cluster's replan feedback
// claims.
func replanMark(cluster string) string { return "replan by cluster " + cluster + ": " }

// replanClaimID is the id of the replan feedback claim of claim.
func replanClaimID(claimID string) string { return blackboard.DeriveID("replan-claim", claimID) }

// replansSoFar counts cluster's replans in the workflow, leaving out the
// one of claim (already created before a crash).
func (a *ClaimAdvancer) replansSoFar(ctx context.Context, workflowID, cluster, claimID string) (int, error) {
	ids, err := a.bb.WorkflowClaims(ctx, workflowID)
	if err != nil {
		return 0, err
	}
	claims, err := a.bb.GetClaims(ctx, ids)
	if err != nil {
		return 0, err
	}
	own := replanClaimID(claimID)
	n := 0
	for _, c := range claims {
		if c != nil && c.ID != own && c.IsFeedback() && strings.HasPrefix(c.ReviewDecision, replanMark(cluster)) {
			n++
		}
	}
	return n, nil
}

// upstreamOfType finds the nearest artefact of type typ that target was
// built from (breadth-first over the sources), in its latest version;
// nil when there is none.
func (a *ClaimAdvancer) upstreamOfType(ctx context.Context, target *blackboard.Artefact, typ string) (*blackboard.Artefact, error) {
	seen := map[string]bool{target.ID: true}
	level := append([]string(nil), target.SourceArtefacts...)
	for depth := 0; depth < maxReplanDepth && len(level) > 0; depth++ {
		var ids []string
		for _, id := range level {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			break
		}
		arts, err := a.bb.GetArtefacts(ctx, ids)
		if err != nil {
			return nil, err
		}
		level = nil
		for _, art := range arts {
			if art == nil {
				continue
			}
			if art.Type == typ {
				latest, err := a.bb.ResolveLatest(ctx, []string{art.ID})
				if err != nil {
					return nil, err
				}
				if len(latest) == 1 && latest[0] != nil {
					return latest[0], nil
				}
				return art, nil
			}
			level = append(level, art.SourceArtefacts...)
		}
	}
	return nil, nil
}

// replan sends the work of a phase its cluster decided to replan back to
// the producer of the cluster's replan type, and ends the claim (its open
// item passes to the replan feedback claim). Without such an upstream
// artefact, or an agent to rework it, the phase fails as on_error: fail
// would.
func (a *ClaimAdvancer) replan(ctx context.Context, b *phaseBoundary, cluster reviewpolicy.Cluster, d reviewpolicy.Decision, decision blackboard.Event) error {
	st := b.st
	cl := st.Claim
	line := d.Line()
	upstream, err := a.upstreamOfType(ctx, b.target, cluster.ReplanType)
	if err != nil {
		return err
	}
	producer, fellBack, ok := "", false, false
	if upstream != nil {
		producer, fellBack, ok = a.dir.ReworkerFor(upstream.ProducedByAgent, upstream.ProducedByRole)
	}
	if !ok {
		why := fmt.Sprintf("%s; no %s upstream of %s %s to replan", d.Reason, cluster.ReplanType, b.target.Type, blackboard.ShortID(b.target.ID))
		if upstream != nil {
			why = fmt.Sprintf("%s; no agent is configured to rework %s %s (role %s)", d.Reason, upstream.Type, blackboard.ShortID(upstream.ID), upstream.ProducedByRole)
		}
		reason := "Terminated by the review policy: " + why
		t := blackboard.Transition{Set: blackboard.ClaimPatch{ReviewDecision: line}}
		return a.finish(ctx, st, t, blackboard.ClaimTerminated, reason, true, why, decision,
			a.event(blackboard.EventClaimTerminated, cl, "", map[string]string{"reason": reason, "rule": string(d.Rule)}))
	}
	var reviewIDs []string
	for _, agent := range cl.GrantedReviewAgents {
		if out := b.outputs[agent]; out != nil && !st.Failed[agent] && !reviewSkipped(st, agent) {
			reviewIDs = append(reviewIDs, out.ID)
		}
	}
	feedbackID := replanClaimID(cl.ID)
	created, err := a.createReworkClaim(ctx, &blackboard.Claim{
		ID: feedbackID, ArtefactID: upstream.ID, WorkflowID: cl.WorkflowID, ArtefactType: upstream.Type,
		Status:                blackboard.ClaimPendingAssignment,
		Kind:                  blackboard.ClaimFeedback,
		GrantedExclusiveAgent: producer,
		AdditionalContextIDs:  reviewIDs,
		ParentClaimID:         cl.ID,
		Iteration:             upstream.Version,
		Attempts:              1,
		ReviewDecision:        textcut.Bytes(replanMark(cluster.Name)+line, 4000),
	}, producer, reworkFields(map[string]string{
		"iteration": strconv.Itoa(upstream.Version), "parent_claim_id": cl.ID,
		"review_ids": strings.Join(reviewIDs, ","), "target_version": strconv.Itoa(upstream.Version),
		"replan": "true", "cluster": cluster.Name, "failed_artefact_id": b.target.ID,
	}, upstream, producer, fellBack))
	if err != nil {
		return err
	}
	if created {
		a.log.Info().Str("claim_id", feedbackID).Str("parent_claim_id", cl.ID).Str("agent", producer).
			Str("replanned", upstream.ID).Str("event", string(blackboard.EventFeedbackClaimCreated)).Msg("replan claim created")
	}
	failpoint.Hit("replan-claim-created")
	reason := fmt.Sprintf("Sent back for a replan to %s (%s v%d): %s", producer, upstream.Type, upstream.Version, d.Reason)
	t := blackboard.Transition{Set: blackboard.ClaimPatch{FeedbackClaimID: feedbackID, ReviewDecision: line}}
	return a.finish(ctx, st, t, blackboard.ClaimTerminated, reason, false, "", decision)
}

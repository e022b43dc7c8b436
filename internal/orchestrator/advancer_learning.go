package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/textcut"
)

// Learning from rejections (the learning loop). Every human rejection
// produces exactly one learning: from the learner agent when one is
// configured (a learn claim granted to it directly), else — or when the
// learner fails — from the human's reason. The learning's id derives from
// the rejected claim, so recording it twice changes nothing.
//
// A learn claim never holds its workflow open (the workflow's outcome is
// the rejection, decided already) and is not ended when the workflow
// ends: it runs to its own end, however the workflow finished.

// startLearning begins the learning for a rejected claim cl: a learn
// claim for the learner, or the reason recorded at once.
func (a *ClaimAdvancer) startLearning(ctx context.Context, cl *blackboard.Claim, target, review *blackboard.Artefact) error {
	if a.cfg.Learner == "" {
		return a.recordLearning(ctx, cl.ID, cl.WorkflowID, target, cl.Approval.Reason, blackboard.LearningFromReason, cl.Approval.By)
	}
	id := blackboard.DeriveID("learn-claim", cl.ID)
	learner := a.cfg.Learner
	stub := &blackboard.Claim{ID: id, ArtefactID: target.ID, WorkflowID: cl.WorkflowID}
	_, err := a.bb.CreateClaim(ctx, blackboard.NewClaim{
		Claim: &blackboard.Claim{
			ID: id, ArtefactID: target.ID, WorkflowID: cl.WorkflowID,
			Status:                blackboard.ClaimPendingAssignment,
			Kind:                  blackboard.ClaimLearn,
			GrantedExclusiveAgent: learner,
			AdditionalContextIDs:  []string{review.ID},
			ParentClaimID:         cl.ID,
			Iteration:             cl.Iteration,
			Attempts:              1,
		},
		TimerIn: a.claims.LeaseTTL + leaseMargin,
		Grants:  map[string]string{learner: "1"},
		Inbox:   []blackboard.InboxMessage{a.grantMessage(stub, learner, blackboard.GrantLearn, "1")},
		Events: []blackboard.Event{{
			Type: blackboard.EventLearnClaimCreated, WorkflowID: cl.WorkflowID, ClaimID: id,
			ArtefactID: target.ID, Agent: learner,
			Fields: map[string]string{"parent_claim_id": cl.ID, "review_id": review.ID},
		}},
		Epoch: a.epoch(),
	})
	switch {
	case err == nil:
		a.m.ClaimsCreated.Inc()
		a.m.Grants.WithLabelValues("learn").Inc()
		a.TimerArmedFunc(a.claims.LeaseTTL + leaseMargin)
		a.log.Info().Str("claim_id", id).Str("parent_claim_id", cl.ID).Str("agent", learner).
			Str("event", string(blackboard.EventLearnClaimCreated)).Msg("asking the learner")
		return nil
	case errors.Is(err, blackboard.ErrExists):
		return nil
	case errors.Is(err, blackboard.ErrWorkflowEnded), errors.Is(err, blackboard.ErrNotFound):
		// Nothing to hang a claim on any more: learn from the reason.
		return a.recordLearning(ctx, cl.ID, cl.WorkflowID, target, cl.Approval.Reason, blackboard.LearningFromReason, cl.Approval.By)
	}
	return err
}

// learnPhase finishes a learn claim once the learner delivered: its
// answer is the learning, or — when it failed — the human's reason is.
func (a *ClaimAdvancer) learnPhase(ctx context.Context, st *blackboard.ClaimState) error {
	cl := st.Claim
	agent := cl.GrantedExclusiveAgent
	outID, ok := st.Outputs[agent]
	if !ok {
		return nil
	}
	ids := []string{cl.ArtefactID, outID}
	ids = append(ids, cl.AdditionalContextIDs...)
	arts, err := a.bb.GetArtefacts(ctx, ids)
	if err != nil {
		return err
	}
	target, out := arts[0], arts[1]
	if target == nil || out == nil {
		return fmt.Errorf("orchestrator: learn claim %s: target %s or output %s is missing", cl.ID, cl.ArtefactID, outID)
	}
	reason, by := "", ""
	if len(arts) > 2 && arts[2] != nil {
		reason, by = arts[2].Payload, arts[2].Metadata["decided_by"]
	}
	text, source := out.Payload, blackboard.LearningFromLearner
	if st.Failed[agent] || strings.TrimSpace(out.Payload) == "" {
		text, source = reason, blackboard.LearningFromReason
		a.log.Warn().Str("claim_id", cl.ID).Str("agent", agent).Str("output_id", out.ID).
			Msg("the learner failed; learning from the human's reason instead")
	}
	if err := a.recordLearning(ctx, cl.ParentClaimID, cl.WorkflowID, target, text, source, by); err != nil {
		return err
	}
	done := fmt.Sprintf("Learning recorded (from the %s): [%s]", source, out.ID)
	return a.finish(ctx, st, blackboard.Transition{}, blackboard.ClaimComplete, done, false, "",
		a.event(blackboard.EventClaimCompleted, cl, "", map[string]string{"reason": done}))
}

// learnFallback ends a learn claim whose learner never delivered (its
// lease was lost every time): the human's reason becomes the learning.
func (a *ClaimAdvancer) learnFallback(ctx context.Context, st *blackboard.ClaimState, why string) error {
	cl := st.Claim
	ids := append([]string{cl.ArtefactID}, cl.AdditionalContextIDs...)
	arts, err := a.bb.GetArtefacts(ctx, ids)
	if err != nil {
		return err
	}
	target := arts[0]
	if target == nil {
		return fmt.Errorf("orchestrator: learn claim %s: target %s is missing", cl.ID, cl.ArtefactID)
	}
	reason, by := "", ""
	if len(arts) > 1 && arts[1] != nil {
		reason, by = arts[1].Payload, arts[1].Metadata["decided_by"]
	}
	if err := a.recordLearning(ctx, cl.ParentClaimID, cl.WorkflowID, target, reason, blackboard.LearningFromReason, by); err != nil {
		return err
	}
	done := "Learning recorded from the human's reason: " + why
	return a.finish(ctx, st, blackboard.Transition{}, blackboard.ClaimComplete, done, false, "",
		a.event(blackboard.EventClaimCompleted, cl, "", map[string]string{"reason": done}))
}

// recordLearning stores the one learning of rejected claim rejectedID.
func (a *ClaimAdvancer) recordLearning(ctx context.Context, rejectedID, workflowID string, target *blackboard.Artefact, text, source, by string) error {
	if strings.TrimSpace(text) == "" {
		text = "(the rejection gave no reason)"
	}
	title, err := a.goalTitle(ctx, workflowID)
	if err != nil {
		return err
	}
	l := &blackboard.Learning{
		ID: blackboard.DeriveID("learning", rejectedID), ArtefactType: target.Type, Title: title,
		Text: text, Source: source, ArtefactID: target.ID, WorkflowID: workflowID, DecidedBy: by,
	}
	recorded, err := a.bb.RecordLearning(ctx, l, a.epoch())
	if err != nil {
		return err
	}
	if !recorded {
		return nil
	}
	a.m.Learnings.WithLabelValues(source).Inc()
	a.log.Info().Str("workflow_id", workflowID).Str("artefact_id", target.ID).Str("source", source).
		Str("event", string(blackboard.EventLearningRecorded)).Str("learning", textcut.Bytes(l.Text, 200)).Msg("learning recorded")
	return a.LearningsChangedFunc(ctx)
}

// goalTitle names a workflow's task for a learning: the goal's subject
// when it has one (vault frontmatter), else its first line.
func (a *ClaimAdvancer) goalTitle(ctx context.Context, workflowID string) (string, error) {
	goal, err := a.bb.GetArtefact(ctx, workflowID)
	if errors.Is(err, blackboard.ErrNotFound) {
		return blackboard.ShortID(workflowID), nil
	}
	if err != nil {
		return "", err
	}
	if s := strings.TrimSpace(goal.Metadata["subject"]); s != "" {
		return s, nil
	}
	if goal.Summary != "" {
		return goal.Summary, nil
	}
	return "workflow " + blackboard.ShortID(workflowID) + " (v" + strconv.Itoa(goal.Version) + ")", nil
}

package integration

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

// gated is a planner whose Plans wait for a human, and a coder that acts
// on approved Plans. extra is appended to the approvals block, orch to the
// orchestrator block, agents to the agents.
func approvalConfig(approvals, orch, agents string) string {
	return `version: "1.0"
orchestrator:
  bid_timeout: 2s
  lease_ttl: 3s
` + orch + `
approvals:
  artefact_types: ["Plan"]
` + approvals + `
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  coder: {command: ["sett-writer", "--type", "CodeChange"], bidding_strategy: exclusive, consumes: ["Plan"]}
` + agents
}

// waitPending waits until a Plan of workflow wf waits for approval and
// returns its request.
func waitPending(t *testing.T, s *stacktest.Stack, wf string, version int) blackboard.ApprovalRequest {
	t.Helper()
	var found blackboard.ApprovalRequest
	s.Eventually(wait, "a Plan waiting for approval", func() bool {
		reqs, err := s.BB.PendingApprovals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reqs {
			if r.WorkflowID == wf && r.Version == version {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

func TestApprovalApproveLetsTheWorkGoOn(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, approvalConfig("", "", ""))
	s.Up("planner", "coder")
	wf := s.PostGoal("Answer the invoice email")
	req := waitPending(t, s, wf, 1)
	ctx := context.Background()
	cl, err := s.BB.GetClaim(ctx, req.ClaimID)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Status != blackboard.ClaimPendingApproval || len(cl.ExpectedBidders) != 0 || cl.Approval.ExpiresAtMs <= cl.Approval.RequestedAtMs {
		t.Fatalf("gated claim %+v: want pending_approval, nobody asked to bid yet, an expiry after the request", cl)
	}
	if codes := stacktest.OfType(s.Artefacts(wf), "CodeChange"); len(codes) != 0 {
		t.Fatalf("the coder acted on a Plan nobody approved: %v", codes)
	}
	if err := s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: req.ArtefactID, Decision: blackboard.ApprovalApproved,
		By: "alice", Channel: blackboard.ChannelCLI}); err != nil {
		t.Fatal(err)
	}
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	arts := s.Artefacts(wf)
	if n := len(stacktest.OfType(arts, "CodeChange")); n != 1 {
		t.Errorf("%d CodeChanges after the approval, want 1", n)
	}
	reviews := stacktest.OfType(arts, "HumanReview")
	if len(reviews) != 1 {
		t.Fatalf("%d human reviews, want the one recording the approval", len(reviews))
	}
	hr := reviews[0]
	if hr.ProducedByRole != "human" || hr.StructuralType != blackboard.StructuralReview || hr.Metadata["decision"] != "approved" ||
		hr.Metadata["decided_by"] != "alice" || hr.Metadata["channel"] != "cli" || hr.SourceArtefacts[0] != req.ArtefactID {
		t.Errorf("human review %+v", hr)
	}
	if evs := s.Events(blackboard.EventApprovalDecided); len(evs) != 1 || evs[0].Field("by") != "alice" || evs[0].Field("channel") != "cli" {
		t.Errorf("approval_decided events %+v, want one by alice via cli", evs)
	}
	if err := s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: req.ArtefactID, Decision: blackboard.ApprovalRejected,
		Reason: "too late", Channel: blackboard.ChannelCLI}); !errors.Is(err, blackboard.ErrAlreadyDecided) {
		t.Errorf("a second decision: %v, want ErrAlreadyDecided", err)
	}
}

func TestApprovalRejectEndsTheWorkflowAndLearnsTheReason(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, approvalConfig("", "", ""))
	s.Up("planner", "coder")
	wf := s.PostGoal("Answer the invoice email")
	req := waitPending(t, s, wf, 1)
	ctx := context.Background()
	reason := "Do not promise payment dates before accounting confirms them."
	if err := s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: req.ArtefactID, Decision: blackboard.ApprovalRejected,
		By: "bob", Channel: blackboard.ChannelVaultMove, Reason: reason}); err != nil {
		t.Fatal(err)
	}
	w := s.WaitWorkflow(wf, wait)
	if w.Status != blackboard.WorkflowRejected || !strings.Contains(w.Outcome, reason) {
		t.Fatalf("workflow %s (%s), want rejected with the reason", w.Status, w.Outcome)
	}
	cl, err := s.BB.GetClaim(ctx, req.ClaimID)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Rejected by bob (vault_move): " + reason; cl.Status != blackboard.ClaimTerminated || cl.TerminationReason != want {
		t.Errorf("claim %s %q, want terminated with %q", cl.Status, cl.TerminationReason, want)
	}
	if n := len(stacktest.OfType(s.Artefacts(wf), "CodeChange")); n != 0 {
		t.Errorf("%d CodeChanges for a rejected Plan", n)
	}
	ls := waitLearnings(t, s, 1)
	if l := ls[0]; l.Text != reason || l.Source != blackboard.LearningFromReason || l.ArtefactType != "Plan" ||
		l.Title != "Answer the invoice email" || l.DecidedBy != "bob" || l.WorkflowID != wf {
		t.Errorf("learning %+v", l)
	}
}

func TestApprovalRejectionTaughtByTheLearner(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		learner    string
		wantSource string
		wantText   string
	}{
		{"the learner answers", `["sett-writer"]`, blackboard.LearningFromLearner, "remember why one was rejected: Too vague."},
		{"the learner fails", `["sh", "-c", "echo broken >&2; exit 3"]`, blackboard.LearningFromReason, "Too vague."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := stacktest.New(t, approvalConfig("", "  learner: sage", "  sage: {command: "+tc.learner+", bidding_strategy: ignore}\n"))
			s.Up("planner", "coder", "sage")
			wf := s.PostGoal("Summarise the board meeting")
			req := waitPending(t, s, wf, 1)
			if err := s.BB.DecideApproval(context.Background(), blackboard.Decision{ArtefactID: req.ArtefactID,
				Decision: blackboard.ApprovalRejected, Channel: blackboard.ChannelCLI, Reason: "Too vague."}); err != nil {
				t.Fatal(err)
			}
			if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowRejected {
				t.Fatalf("workflow %s (%s), want rejected", w.Status, w.Outcome)
			}
			l := waitLearnings(t, s, 1)[0]
			if l.Source != tc.wantSource || !strings.Contains(l.Text, tc.wantText) {
				t.Errorf("learning %+v, want source %s containing %q", l, tc.wantSource, tc.wantText)
			}
			learn := s.WaitEvent(blackboard.EventLearnClaimCreated, nil, wait)
			s.Eventually(wait, "the learn claim to end", func() bool {
				cl, err := s.BB.GetClaim(context.Background(), learn.ClaimID)
				return err == nil && cl.Status == blackboard.ClaimComplete
			})
		})
	}
}

func TestApprovalReworkAndAStaleDecision(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, approvalConfig("  on_reject: rework", "", ""))
	s.Up("planner", "coder")
	wf := s.PostGoal("Plan the release")
	v1 := waitPending(t, s, wf, 1)
	ctx := context.Background()
	if err := s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: v1.ArtefactID, Decision: blackboard.ApprovalRejected,
		Channel: blackboard.ChannelFrontmatter, By: "carol", Reason: "Add a rollback step."}); err != nil {
		t.Fatal(err)
	}
	v2 := waitPending(t, s, wf, 2)
	plan2, err := s.BB.GetArtefact(ctx, v2.ArtefactID)
	if err != nil {
		t.Fatal(err)
	}
	if plan2.LogicalID != v1.LogicalID || !strings.Contains(plan2.Payload, "Add a rollback step.") {
		t.Errorf("v2 %s (thread %s) does not rework v1 with the reason:\n%s", plan2.ID, plan2.LogicalID, plan2.Payload)
	}
	err = s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: v1.ArtefactID, Decision: blackboard.ApprovalApproved, Channel: blackboard.ChannelCLI})
	var sup *blackboard.SupersededError
	if !errors.As(err, &sup) || sup.CurrentID != v2.ArtefactID || sup.CurrentVersion != 2 {
		t.Fatalf("approving v1 after v2 exists: %v, want superseded naming v2 %s", err, v2.ArtefactID)
	}
	if err := s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: v2.ArtefactID, Decision: blackboard.ApprovalApproved, Channel: blackboard.ChannelCLI}); err != nil {
		t.Fatal(err)
	}
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	fb := s.WaitEvent(blackboard.EventFeedbackClaimCreated, nil, wait)
	fbClaim, err := s.BB.GetClaim(ctx, fb.ClaimID)
	if err != nil {
		t.Fatal(err)
	}
	if len(fbClaim.AdditionalContextIDs) != 1 || fbClaim.AdditionalContextIDs[0] != blackboard.DeriveID("human-review", v1.ClaimID) {
		t.Errorf("feedback claim context %v, want the human review of v1", fbClaim.AdditionalContextIDs)
	}
	if l := waitLearnings(t, s, 1)[0]; l.Text != "Add a rollback step." {
		t.Errorf("learning %+v, want the reason", l)
	}
}

func TestApprovalTimeoutEndsTheClaim(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, approvalConfig("  timeout: 1s", "", ""))
	s.Up("planner", "coder")
	wf := s.PostGoal("Plan the offsite")
	req := waitPending(t, s, wf, 1)
	w := s.WaitWorkflow(wf, wait)
	if w.Status != blackboard.WorkflowFailed || !strings.Contains(w.Outcome, "timed out") {
		t.Fatalf("workflow %s (%s), want failed because the approval timed out", w.Status, w.Outcome)
	}
	ctx := context.Background()
	cl, err := s.BB.GetClaim(ctx, req.ClaimID)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Status != blackboard.ClaimTerminated || !strings.Contains(cl.TerminationReason, "needs human review") {
		t.Errorf("claim %s %q", cl.Status, cl.TerminationReason)
	}
	if evs := s.Events(blackboard.EventApprovalExpired); len(evs) != 1 {
		t.Errorf("%d approval_expired events, want 1", len(evs))
	}
	if reqs, _ := s.BB.PendingApprovals(ctx); len(reqs) != 0 {
		t.Errorf("%d approvals still listed after the timeout", len(reqs))
	}
	// A late decision is accepted and resumes the work: the workflow runs
	// again and completes.
	if err := s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: req.ArtefactID, Decision: blackboard.ApprovalApproved, Channel: blackboard.ChannelCLI}); err != nil {
		t.Fatalf("deciding after the timeout: %v, want it accepted", err)
	}
	if evs := s.Events(blackboard.EventWorkflowReopened); len(evs) != 1 {
		t.Errorf("%d workflow_reopened events, want 1", len(evs))
	}
	s.Eventually(wait, "the late-approved workflow completing", func() bool {
		w, err := s.BB.GetWorkflow(ctx, wf)
		return err == nil && w.Status == blackboard.WorkflowCompleted
	})
	err = s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: req.ArtefactID, Decision: blackboard.ApprovalRejected, Reason: "no", Channel: blackboard.ChannelCLI})
	if !errors.Is(err, blackboard.ErrAlreadyDecided) {
		t.Errorf("a second decision: %v, want ErrAlreadyDecided", err)
	}
}

// TestApprovalDecisionSurvivesACrash decides while no orchestrator runs,
// then crashes the next one just after it recorded the human review: the
// third applies the decision once.
func TestApprovalDecisionSurvivesACrash(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, approvalConfig("", "", ""))
	orch, _ := s.Up("planner", "coder")
	wf := s.PostGoal("Draft the newsletter")
	req := waitPending(t, s, wf, 1)
	orch.Kill()
	if err := s.BB.DecideApproval(context.Background(), blackboard.Decision{ArtefactID: req.ArtefactID,
		Decision: blackboard.ApprovalApproved, By: "dave", Channel: blackboard.ChannelCLI}); err != nil {
		t.Fatal(err)
	}
	orch.SetEnv("SETT_FAILPOINT=approval-review-written")
	orch.Restart()
	if code := orch.WaitExit(wait); code != 137 {
		t.Fatalf("orchestrator exited %d, want the failpoint's 137", code)
	}
	orch.SetEnv()
	orch.Restart()
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	arts := s.Artefacts(wf)
	if n := len(stacktest.OfType(arts, "HumanReview")); n != 1 {
		t.Errorf("%d human reviews, want exactly one", n)
	}
	if n := len(stacktest.OfType(arts, "CodeChange")); n != 1 {
		t.Errorf("%d CodeChanges, want exactly one", n)
	}
}

// waitLearnings waits until the instance holds n learnings.
func waitLearnings(t *testing.T, s *stacktest.Stack, n int) []blackboard.Learning {
	t.Helper()
	var ls []blackboard.Learning
	s.Eventually(wait, "the learning", func() bool {
		var err error
		ls, err = s.BB.Learnings(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return len(ls) >= n
	})
	if len(ls) != n {
		t.Fatalf("%d learnings, want %d: %+v", len(ls), n, ls)
	}
	return ls
}

// TestALearningReachesTheNextTask is the learning loop's loop without a vault: a
// plan is rejected with a reason, the learning is recorded, and the next
// task's tool input carries it (the example writer quotes what it got).
func TestALearningReachesTheNextTask(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, approvalConfig("", "", ""))
	s.Up("planner", "coder")
	ctx := context.Background()
	first := s.PostGoal("Reply to the invoice email")
	req := waitPending(t, s, first, 1)
	if err := s.BB.DecideApproval(ctx, blackboard.Decision{ArtefactID: req.ArtefactID, Decision: blackboard.ApprovalRejected,
		By: "erin", Channel: blackboard.ChannelCLI, Reason: "Never promise a payment date."}); err != nil {
		t.Fatal(err)
	}
	s.WaitWorkflow(first, wait)
	waitLearnings(t, s, 1)
	second := s.PostGoal("Reply to the supplier")
	req2 := waitPending(t, s, second, 1)
	plan, err := s.BB.GetArtefact(ctx, req2.ArtefactID)
	if err != nil {
		t.Fatal(err)
	}
	want := `Rejected plan for "Reply to the invoice email": Never promise a payment date.`
	if !strings.Contains(plan.Payload, "Learnings applied:") || !strings.Contains(plan.Payload, want) {
		t.Errorf("the next plan's tool did not receive the learning %q:\n%s", want, plan.Payload)
	}
}

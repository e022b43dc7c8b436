package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

// reviewLoop is a planner whose Plan is reviewed by reviewer (with the
// given flags); orchestrator is the orchestrator section (may be empty).
func reviewLoop(orchestrator, reviewerFlags string) string {
	return `version: "1.0"
` + orchestrator + `
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  reviewer: {command: ["sett-reviewer"` + reviewerFlags + `], bidding_strategy: review, consumes: ["Plan"]}
`
}

func TestRejectionReworkApproval(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, reviewLoop(`orchestrator: {bid_timeout: 2s}`, `, "--require", "tests"`))
	s.Up("planner", "reviewer")
	wf := s.PostGoal("Add a /health endpoint")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	ctx := context.Background()
	arts := s.Artefacts(wf)
	plans := stacktest.OfType(arts, "Plan")
	if len(plans) != 2 {
		t.Fatalf("%d plans, want v1 and v2", len(plans))
	}
	v1, v2 := plans[0], plans[1]
	if v2.LogicalID != v1.LogicalID || v2.Type != v1.Type || v1.Version != 1 || v2.Version != 2 {
		t.Fatalf("v1 %s/%s v%d, v2 %s/%s v%d: want one thread, same type, versions 1 and 2",
			v1.LogicalID, v1.Type, v1.Version, v2.LogicalID, v2.Type, v2.Version)
	}
	reviews := stacktest.OfType(arts, "Review")
	if len(reviews) != 2 {
		t.Fatalf("%d reviews, want a rejection of v1 and an approval of v2", len(reviews))
	}
	rejection := reviews[0]
	if len(v2.SourceArtefacts) != 2 || v2.SourceArtefacts[0] != v1.ID || v2.SourceArtefacts[1] != rejection.ID {
		t.Errorf("v2 sources %v, want [v1 %s, review %s]", v2.SourceArtefacts, v1.ID, rejection.ID)
	}
	if !strings.Contains(v2.Payload, "The Plan must mention tests.") {
		t.Errorf("v2 does not address the feedback:\n%s", v2.Payload)
	}

	v1Claim, err := s.BB.GetClaim(ctx, blackboard.DeriveID("claim", v1.ID))
	if err != nil {
		t.Fatal(err)
	}
	wantReason := "Terminated due to negative review feedback. See artefacts: [" + rejection.ID + "]"
	if v1Claim.Status != blackboard.ClaimTerminated || v1Claim.TerminationReason != wantReason {
		t.Errorf("v1 claim %s %q, want terminated with %q", v1Claim.Status, v1Claim.TerminationReason, wantReason)
	}
	fb, err := s.BB.GetClaim(ctx, v1Claim.FeedbackClaimID)
	if err != nil {
		t.Fatal(err)
	}
	if fb.Status != blackboard.ClaimComplete || fb.GrantedExclusiveAgent != "planner" || fb.ArtefactID != v1.ID ||
		fb.Iteration != 1 || len(fb.AdditionalContextIDs) != 1 || fb.AdditionalContextIDs[0] != rejection.ID {
		t.Errorf("feedback claim %+v", fb)
	}
	v2Claim, err := s.BB.GetClaim(ctx, blackboard.DeriveID("claim", v2.ID))
	if err != nil {
		t.Fatal(err)
	}
	if v2Claim.Status != blackboard.ClaimComplete || len(v2Claim.GrantedReviewAgents) != 1 {
		t.Errorf("v2 claim %s reviewed by %v, want complete after one review", v2Claim.Status, v2Claim.GrantedReviewAgents)
	}

	// What an operator types into redis-cli reads plainly.
	rdb := redistest.Raw(t)
	k := s.BB.Keys()
	if got := rdb.HGet(ctx, k.Claim(v1Claim.ID), "termination_reason").Val(); got != wantReason {
		t.Errorf("HGET termination_reason = %q", got)
	}
	if got := rdb.HGet(ctx, k.Claim(fb.ID), "additional_context_ids").Val(); got != `["`+rejection.ID+`"]` {
		t.Errorf("HGET additional_context_ids = %q", got)
	}
	thread := rdb.ZRangeWithScores(ctx, k.Thread(v1.LogicalID), 0, -1).Val()
	if len(thread) != 2 || thread[0].Member != v1.ID || thread[0].Score != 1 || thread[1].Member != v2.ID || thread[1].Score != 2 {
		t.Errorf("ZRANGE thread WITHSCORES = %v", thread)
	}

	for _, want := range []blackboard.EventType{blackboard.EventReviewRejected, blackboard.EventFeedbackClaimCreated, blackboard.EventArtefactReworked} {
		if len(s.Events(want)) != 1 {
			t.Errorf("%d %s events, want 1", len(s.Events(want)), want)
		}
	}
	if it := s.Events(blackboard.EventFeedbackClaimCreated)[0].Field("iteration"); it != "1" {
		t.Errorf("feedback_claim_created iteration %q, want 1", it)
	}
}

func TestMaxIterationsExceeded(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, reviewLoop(`orchestrator: {bid_timeout: 2s, max_review_iterations: 2}`, `, "--always-reject"`))
	s.Up("planner", "reviewer")
	wf := s.PostGoal("never good enough")
	w := s.WaitWorkflow(wf, wait)
	if w.Status != blackboard.WorkflowFailed {
		t.Fatalf("workflow %s (%s), want failed", w.Status, w.Outcome)
	}
	arts := s.Artefacts(wf)
	plans := stacktest.OfType(arts, "Plan")
	if len(plans) != 3 || plans[2].Version != 3 {
		t.Fatalf("%d plans, want v1, v2 and v3", len(plans))
	}
	failures := stacktest.OfType(arts, "MaxIterationsExceeded")
	if len(failures) != 1 {
		t.Fatalf("%d MaxIterationsExceeded failures, want exactly 1", len(failures))
	}
	f := failures[0]
	v3 := plans[2]
	if f.StructuralType != blackboard.StructuralFailure || f.ProducedByRole != "orchestrator" ||
		len(f.SourceArtefacts) != 1 || f.SourceArtefacts[0] != v3.ID {
		t.Errorf("failure %+v, want a Failure by orchestrator sourced from v3", f)
	}
	for _, want := range []string{"(2)", v3.ID, "version 3"} {
		if !strings.Contains(f.Payload, want) {
			t.Errorf("failure payload lacks %q: %s", want, f.Payload)
		}
	}
	cl, err := s.BB.GetClaim(context.Background(), blackboard.DeriveID("claim", v3.ID))
	if err != nil {
		t.Fatal(err)
	}
	if cl.Status != blackboard.ClaimTerminated || cl.TerminationReason != "Terminated after reaching max review iterations (2)." {
		t.Errorf("v3 claim %s %q", cl.Status, cl.TerminationReason)
	}
	if n := len(s.Events(blackboard.EventClaimTerminatedMaxIterations)); n != 1 {
		t.Errorf("%d claim_terminated_max_iterations events, want 1", n)
	}
}

func TestTwoReviewersRejectOneFeedbackClaim(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, `version: "1.0"
orchestrator: {bid_timeout: 2s}
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  security: {command: ["sett-reviewer", "--require", "auth"], bidding_strategy: review, consumes: ["Plan"]}
  qa: {command: ["sett-reviewer", "--require", "tests"], bidding_strategy: review, consumes: ["Plan"]}
`)
	s.Up("planner", "security", "qa")
	wf := s.PostGoal("Add a /health endpoint")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	arts := s.Artefacts(wf)
	plans := stacktest.OfType(arts, "Plan")
	if len(plans) != 2 {
		t.Fatalf("%d plans, want v1 and v2", len(plans))
	}
	var fbs []*blackboard.Claim
	for _, cl := range s.Claims(wf) {
		if cl.IsFeedback() {
			fbs = append(fbs, cl)
		}
	}
	if len(fbs) != 1 {
		t.Fatalf("%d feedback claims, want exactly 1", len(fbs))
	}
	var rejections []string
	for _, r := range stacktest.OfType(arts, "Review") {
		if r.SourceArtefacts[0] == plans[0].ID {
			rejections = append(rejections, r.ID)
		}
	}
	if len(fbs[0].AdditionalContextIDs) != 2 || !sameSet(fbs[0].AdditionalContextIDs, rejections) {
		t.Fatalf("feedback claim holds %v, want both rejections %v", fbs[0].AdditionalContextIDs, rejections)
	}
	// The tool got both reviews: the writer answers each one.
	for _, want := range []string{"From security: The Plan must mention auth.", "From qa: The Plan must mention tests."} {
		if !strings.Contains(plans[1].Payload, want) {
			t.Errorf("v2 lacks %q:\n%s", want, plans[1].Payload)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}

func TestMissingProducerAfterConfigChange(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, `version: "1.0"
orchestrator: {bid_timeout: 2s}
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  reviewer: {command: `+gated("go", "sett-reviewer --always-reject")+`, bidding_strategy: review, consumes: ["Plan"]}
`)
	orch, _ := s.Up("planner", "reviewer")
	wf := s.PostGoal("the author leaves")
	plan := s.WaitEvent(blackboard.EventArtefactCreated, func(e blackboard.Event) bool { return e.Field("type") == "Plan" }, wait)
	waitGranted(t, s, plan.ArtefactID, "reviewer")
	// The planner is removed from sett.yml and the orchestrator restarted
	// while the review is still being written.
	orch.Stop()
	s.WriteConfig(`version: "1.0"
orchestrator: {bid_timeout: 2s}
agents:
  reviewer: {command: ["sett-reviewer", "--always-reject"], bidding_strategy: review, consumes: ["Plan"]}
`)
	orch.Restart()
	s.WaitReady(orch)
	openGate(t, s, "go")
	w := s.WaitWorkflow(wf, wait)
	if w.Status != blackboard.WorkflowFailed {
		t.Fatalf("workflow %s (%s), want failed", w.Status, w.Outcome)
	}
	failures := stacktest.OfType(s.Artefacts(wf), "MissingAgentConfiguration")
	if len(failures) != 1 || !strings.Contains(failures[0].Payload, `"planner"`) {
		t.Fatalf("failures %+v, want one MissingAgentConfiguration naming role planner", failures)
	}
	cl, err := s.BB.GetClaim(context.Background(), blackboard.DeriveID("claim", plan.ArtefactID))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Terminated due to missing agent configuration (role: planner)."; cl.TerminationReason != want {
		t.Fatalf("claim reason %q, want %q", cl.TerminationReason, want)
	}
	if n := len(s.Events(blackboard.EventClaimTerminatedMissingAgent)); n != 1 {
		t.Errorf("%d claim_terminated_missing_agent events, want 1", n)
	}
}

func TestUnlimitedIterations(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, reviewLoop(`orchestrator: {bid_timeout: 2s, max_review_iterations: 0}`, `, "--approve-from-version", "4"`))
	s.Up("planner", "reviewer")
	wf := s.PostGoal("keep going")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	plans := stacktest.OfType(s.Artefacts(wf), "Plan")
	if len(plans) != 4 || plans[3].Version != 4 {
		t.Fatalf("%d plans, want v1..v4", len(plans))
	}
	last := stacktest.OfType(s.Artefacts(wf), "Review")
	var verdict struct{ Verdict string }
	if err := json.Unmarshal([]byte(last[len(last)-1].Payload), &verdict); err != nil || verdict.Verdict != "approve" {
		t.Fatalf("last review %q, want an approval of v4", last[len(last)-1].Payload)
	}
}

func TestNoOrchestratorSectionApproves(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, reviewLoop("", ""))
	s.Up("planner", "reviewer")
	wf := s.PostGoal("plain approval")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	arts := s.Artefacts(wf)
	if len(stacktest.OfType(arts, "Plan")) != 1 || len(stacktest.OfType(arts, "Review")) != 1 {
		t.Fatalf("artefacts %v, want one plan approved by one review", types(arts))
	}
	if n := len(s.Events(blackboard.EventReviewApproved)); n != 1 {
		t.Errorf("%d review_approved events, want 1", n)
	}
}

func TestCrashBetweenRejectionAndFeedbackClaim(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, reviewLoop(`orchestrator: {bid_timeout: 2s}`, `, "--require", "tests"`))
	cubs := []*stacktest.Proc{s.StartCub("planner"), s.StartCub("reviewer")}
	s.WaitReady(cubs...)
	orch := s.StartOrchestratorWith("SETT_FAILPOINT=feedback-claim-created")
	s.WaitReady(orch)
	wf := s.PostGoal("crash after the feedback claim")
	if code := orch.WaitExit(wait); code != 137 {
		t.Fatalf("orchestrator exit code %d, want 137 from the failpoint", code)
	}
	// The crash left the feedback claim written and the rejected claim
	// still in review.
	plan := stacktest.OfType(s.Artefacts(wf), "Plan")[0]
	rejected, err := s.BB.GetClaim(context.Background(), blackboard.DeriveID("claim", plan.ID))
	if err != nil {
		t.Fatal(err)
	}
	if rejected.Status != blackboard.ClaimPendingReview {
		t.Fatalf("rejected claim is %s, want still pending_review at the crash", rejected.Status)
	}
	orch.SetEnv()
	orch.Restart()
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	var fbs int
	for _, cl := range s.Claims(wf) {
		if cl.IsFeedback() {
			fbs++
		}
	}
	if fbs != 1 {
		t.Fatalf("%d feedback claims, want exactly 1", fbs)
	}
	if n := len(stacktest.OfType(s.Artefacts(wf), "Plan")); n != 2 {
		t.Fatalf("%d plans, want 2", n)
	}
}

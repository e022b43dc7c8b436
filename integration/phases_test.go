package integration

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

// pipeline is a config whose Plan goes through all three phases.
const pipeline = `version: "1.0"
orchestrator:
  bid_timeout: 2s
  lease_ttl: 3s
agents:
  planner:
    command: ["sett-writer", "--type", "Plan"]
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
  reviewer:
    command: ["sett-reviewer"]
    bidding_strategy: review
    consumes: ["Plan"]
  auditor:
    command: ["sett-writer", "--type", "AuditNote"]
    bidding_strategy: claim
    consumes: ["Plan"]
  coder:
    command: ["sett-writer", "--type", "CodeChange"]
    bidding_strategy: exclusive
    consumes: ["Plan"]
`

func TestThreePhaseHappyPath(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, pipeline)
	s.Up("planner", "reviewer", "auditor", "coder")
	wf := s.PostGoal("Add a /health endpoint")
	w := s.WaitWorkflow(wf, 60*time.Second)
	if w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s: status %s (%s), want completed", wf, w.Status, w.Outcome)
	}
	ctx := context.Background()
	arts := listWorkflow(t, s.BB, wf)
	byType := map[string][]*blackboard.Artefact{}
	for _, a := range arts {
		byType[a.Type] = append(byType[a.Type], a)
	}
	for typ, want := range map[string]int{"GoalDefined": 1, "Plan": 1, "Review": 1, "AuditNote": 1, "CodeChange": 1} {
		if got := len(byType[typ]); got != want {
			t.Errorf("%d %s artefacts, want %d (all: %v)", got, typ, want, types(arts))
		}
	}
	plan := byType["Plan"][0]
	planClaim, err := s.BB.ClaimForArtefact(ctx, plan.ID)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := s.BB.GetClaim(ctx, planClaim)
	if err != nil {
		t.Fatal(err)
	}
	if cl.Status != blackboard.ClaimComplete || len(cl.GrantedReviewAgents) != 1 || cl.GrantedReviewAgents[0] != "reviewer" ||
		len(cl.GrantedParallelAgents) != 1 || cl.GrantedParallelAgents[0] != "auditor" || cl.GrantedExclusiveAgent != "coder" {
		t.Errorf("plan claim = %+v; want complete with review=[reviewer] parallel=[auditor] exclusive=coder", cl)
	}
	// The goal's only consumer was granted by the script creating the
	// claim, which recorded the bid its rules decide (decide_rule_bids,
	// the default: nobody was asked, so the grant is known at creation:
	// granted_by=rules); the plan's later phases by the orchestrator at
	// each boundary (its review grant only when the reviewer, the one
	// agent asked, granted by its own bid).
	by := map[string][]string{}
	for _, e := range s.Events(blackboard.EventClaimGranted) {
		switch e.ClaimID {
		case blackboard.DeriveID("claim", wf):
			by["goal "+e.Field("phase")] = append(by["goal "+e.Field("phase")], e.Field("granted_by"))
		case planClaim:
			if e.Field("phase") != "review" {
				by["plan "+e.Field("phase")] = append(by["plan "+e.Field("phase")], e.Field("granted_by"))
			}
		}
	}
	if want := map[string][]string{"goal exclusive": {"rules"}, "plan parallel": {""}, "plan exclusive": {""}}; !reflect.DeepEqual(by, want) {
		t.Errorf("grants → granted_by = %v, want %v", by, want)
	}
	// The review and the audit note come before the code change: phases run in order.
	review, audit, code := byType["Review"][0], byType["AuditNote"][0], byType["CodeChange"][0]
	if !(review.CreatedAtMs <= audit.CreatedAtMs && audit.CreatedAtMs <= code.CreatedAtMs) {
		t.Errorf("phase order broken: review %d, audit %d, code %d", review.CreatedAtMs, audit.CreatedAtMs, code.CreatedAtMs)
	}
	if review.StructuralType != blackboard.StructuralReview || review.ClaimID != planClaim {
		t.Errorf("review artefact = %+v", review)
	}
	for _, a := range arts {
		if a.WorkflowID != wf {
			t.Errorf("artefact %s has workflow %s, want %s", a.ID, a.WorkflowID, wf)
		}
	}
}

func listWorkflow(t *testing.T, bb *blackboard.Client, wf string) []*blackboard.Artefact {
	t.Helper()
	ctx := context.Background()
	page, err := bb.ListArtefacts(ctx, blackboard.PageQuery{WorkflowID: wf, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	arts, err := bb.GetArtefacts(ctx, page.IDs)
	if err != nil {
		t.Fatal(err)
	}
	return arts
}

func types(arts []*blackboard.Artefact) []string {
	var out []string
	for _, a := range arts {
		out = append(out, a.Type)
	}
	return out
}

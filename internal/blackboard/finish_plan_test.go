package blackboard_test

import (
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// exclusiveGrant creates a claim on a new workflow's goal under epoch 1
// (also the stored epoch), with a finish plan when finish is set, and lets
// coder's exclusive bid grant it in the bid script: the claim is
// pending_exclusive with coder's grant token "1".
func exclusiveGrant(t *testing.T, c *blackboard.Client, finish bool) (*blackboard.Artefact, *blackboard.Claim) {
	t.Helper()
	if err := redistest.Raw(t).Set(t.Context(), c.Keys().Epoch(), "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	g := startWorkflow(t, c)
	cl := pendingClaim(g, "coder")
	req := blackboard.InboxMessage{Agent: "coder", Kind: blackboard.MessageBidRequest, ClaimID: cl.ID,
		ArtefactID: g.ID, WorkflowID: g.ID, ArtefactType: g.Type, StructuralType: g.StructuralType, ProducedByRole: "user"}
	createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: cl, ByArtefact: true, BidTimeout: time.Hour,
		Inbox: []blackboard.InboxMessage{req}, GrantPlan: planFor(0, "coder", blackboard.GrantExclusive, map[string]blackboard.Bid{"coder": blackboard.BidExclusive}), FinishByResult: finish})
	answer(t, c, []string{"coder"}, map[string]blackboard.Bid{"coder": blackboard.BidExclusive})
	got, err := c.GetClaim(t.Context(), cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != blackboard.ClaimPendingExclusive || got.GrantedExclusiveAgent != "coder" {
		t.Fatalf("claim after the bid = %s granted to %q, want pending_exclusive granted to coder", got.Status, got.GrantedExclusiveAgent)
	}
	return g, got
}

// resultOf is coder's result for cl, of structural type st.
func resultOf(g *blackboard.Artefact, cl *blackboard.Claim, st blackboard.StructuralType) *blackboard.Artefact {
	a := child(g.ID)
	a.StructuralType, a.ClaimID, a.ProducedByAgent = st, cl.ID, "coder"
	return a
}

// queueEntries returns the orchestrator queue entries named name.
func queueEntries(t *testing.T, c *blackboard.Client, name string) []map[string]string {
	t.Helper()
	msgs, err := redistest.Raw(t).XRange(t.Context(), c.Keys().OrchestratorQueue(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, m := range msgs {
		if str(m.Values["event"]) != name {
			continue
		}
		e := map[string]string{}
		for k, v := range m.Values {
			e[k] = str(v)
		}
		out = append(out, e)
	}
	return out
}

func TestResultCompletesItsClaimInItsScript(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	g, cl := exclusiveGrant(t, c, true)
	if v, _ := raw.HGet(ctx, c.Keys().Claim(cl.ID), "finish_plan").Result(); v != "1" {
		t.Fatalf("finish_plan = %q, want the epoch 1", v)
	}
	res := create(t, c, resultOf(g, cl, blackboard.StructuralTerminal), blackboard.WriteAuth{GrantToken: "1"})

	got, err := c.GetClaim(ctx, cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != blackboard.ClaimComplete || got.CompletionReason != "All phases complete." || got.Rev != cl.Rev+1 {
		t.Fatalf("claim = %s (%q) rev %d, want complete (All phases complete.) rev %d", got.Status, got.CompletionReason, got.Rev, cl.Rev+1)
	}
	if n, _ := raw.HExists(ctx, c.Keys().Claim(cl.ID), "finish_plan").Result(); n {
		t.Error("the spent finish_plan is still on the claim")
	}
	if _, err := raw.ZScore(ctx, c.Keys().ActiveClaims(), cl.ID).Result(); err == nil {
		t.Error("the completed claim is still in the active index")
	}
	if _, err := raw.ZScore(ctx, c.Keys().Timers(), cl.ID).Result(); err == nil {
		t.Error("the completed claim still has a timer")
	}
	if in, _ := raw.SIsMember(ctx, c.Keys().Running(), cl.ID).Result(); in {
		t.Error("the completed claim still holds a scheduler slot")
	}
	wf, err := c.GetWorkflow(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wf.Status != blackboard.WorkflowCompleted || wf.OpenItems != 0 {
		t.Fatalf("workflow = %s with %d open items, want completed with 0", wf.Status, wf.OpenItems)
	}

	completed := eventsOf(t, c, blackboard.EventClaimCompleted)
	if len(completed) != 1 || completed[0].ClaimID != cl.ID || completed[0].Field("completed_by") != "result" ||
		completed[0].ArtefactID != g.ID {
		t.Fatalf("claim_completed events = %+v, want one for %s on target %s with completed_by=result", completed, cl.ID, g.ID)
	}
	var moved bool
	for _, e := range eventsOf(t, c, blackboard.EventClaimTransitioned) {
		if e.ClaimID == cl.ID && e.Field("from") == "pending_exclusive" && e.Field("to") == "complete" {
			moved = true
		}
	}
	if !moved {
		t.Error("no claim_transitioned pending_exclusive → complete event")
	}
	if ends := eventsOf(t, c, blackboard.EventWorkflowCompleted); len(ends) != 1 || ends[0].Field("status") != "completed" {
		t.Fatalf("workflow_completed events = %+v, want one, completed", ends)
	}

	// The orchestrator is told, to count it; it is not asked to advance.
	done := queueEntries(t, c, string(blackboard.EventClaimCompletedByResult))
	if len(done) != 1 || done[0]["claim_id"] != cl.ID || done[0]["ended"] != "1" || done[0]["artefact_id"] != res.ID {
		t.Fatalf("claim_completed_by_result entries = %v, want one for %s with ended=1", done, cl.ID)
	}
	for _, e := range queueEntries(t, c, string(blackboard.EventArtefactCreated)) {
		if e["claim_id"] == cl.ID {
			t.Fatalf("the result was queued for the orchestrator as well: %v", e)
		}
	}
	if n := len(queueEntries(t, c, string(blackboard.EventWorkflowCompleted))); n != 0 {
		t.Fatalf("%d workflow_completed queue entries, want none (the completion entry says ended=1)", n)
	}
}

func TestClaimableResultCompletesAndAsksForTheNextClaim(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g, cl := exclusiveGrant(t, c, true)
	res := create(t, c, resultOf(g, cl, blackboard.StructuralStandard), blackboard.WriteAuth{GrantToken: "1"})

	got, err := c.GetClaim(ctx, cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != blackboard.ClaimComplete {
		t.Fatalf("claim = %s, want complete", got.Status)
	}
	wf, err := c.GetWorkflow(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The result is open work of its own: the workflow goes on.
	if wf.Status != blackboard.WorkflowRunning || wf.OpenItems != 1 {
		t.Fatalf("workflow = %s with %d open items, want running with 1 (the result)", wf.Status, wf.OpenItems)
	}
	created := queueEntries(t, c, string(blackboard.EventArtefactCreated))
	var next map[string]string
	for _, e := range created {
		if e["artefact_id"] == res.ID {
			next = e
		}
	}
	if next == nil || next["claim_id"] != "" || next["target_id"] != "" {
		t.Fatalf("queue entry of the result = %v, want one without claim_id (the orchestrator creates its claim only)", next)
	}
	if done := queueEntries(t, c, string(blackboard.EventClaimCompletedByResult)); len(done) != 1 || done[0]["ended"] != "0" {
		t.Fatalf("claim_completed_by_result entries = %v, want one with ended=0", done)
	}
}

func TestResultLeavesItsClaimToTheOrchestrator(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		finish bool
		st     blackboard.StructuralType
		memory string
		other  bool // the result names another running workflow than its claim's
		before func(t *testing.T, c *blackboard.Client, g *blackboard.Artefact, cl *blackboard.Claim)
	}{
		{name: "no finish plan", st: blackboard.StructuralTerminal},
		{name: "a new leader", finish: true, st: blackboard.StructuralTerminal,
			before: func(t *testing.T, c *blackboard.Client, g *blackboard.Artefact, cl *blackboard.Claim) {
				if err := redistest.Raw(t).Set(t.Context(), c.Keys().Epoch(), "2", 0).Err(); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a failure", finish: true, st: blackboard.StructuralFailure},
		{name: "memory to merge", finish: true, st: blackboard.StructuralTerminal, memory: `{"facts":["x"]}`},
		{name: "a failure on record", finish: true, st: blackboard.StructuralTerminal,
			before: func(t *testing.T, c *blackboard.Client, g *blackboard.Artefact, cl *blackboard.Claim) {
				if err := redistest.Raw(t).SAdd(t.Context(), c.Keys().Failures(cl.ID), "coder").Err(); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a result naming another workflow", finish: true, st: blackboard.StructuralTerminal,
			other: true},
		{name: "the workflow ended", finish: true, st: blackboard.StructuralTerminal,
			before: func(t *testing.T, c *blackboard.Client, g *blackboard.Artefact, cl *blackboard.Claim) {
				if _, err := c.EndWorkflow(t.Context(), g.ID, blackboard.WorkflowCancelled, "stopped", 1); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			g, cl := exclusiveGrant(t, c, tc.finish)
			if tc.before != nil {
				tc.before(t, c, g, cl)
			}
			res := resultOf(g, cl, tc.st)
			res.Memory = tc.memory
			if tc.other {
				res.WorkflowID = startWorkflow(t, c).ID
			}
			create(t, c, res, blackboard.WriteAuth{GrantToken: "1"})

			got, err := c.GetClaim(t.Context(), cl.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != blackboard.ClaimPendingExclusive || got.Rev != cl.Rev {
				t.Fatalf("claim = %s rev %d, want it untouched (pending_exclusive rev %d)", got.Status, got.Rev, cl.Rev)
			}
			var asked bool
			for _, e := range queueEntries(t, c, string(blackboard.EventArtefactCreated)) {
				if e["artefact_id"] == res.ID && e["claim_id"] == cl.ID && e["target_id"] == g.ID {
					asked = true
				}
			}
			if !asked {
				t.Fatal("the result was not queued for the orchestrator with its claim and target")
			}
			if done := queueEntries(t, c, string(blackboard.EventClaimCompletedByResult)); len(done) != 0 {
				t.Fatalf("claim_completed_by_result entries = %v, want none", done)
			}
		})
	}
}

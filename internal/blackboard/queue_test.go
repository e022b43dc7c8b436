package blackboard_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// queued reads the orchestrator's queue: event type of each entry.
func queued(t *testing.T, c *blackboard.Client) []string {
	t.Helper()
	raw := redistest.Raw(t)
	msgs, err := raw.XRange(t.Context(), c.Keys().OrchestratorQueue(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range msgs {
		out = append(out, m.Values["event"].(string)+":"+str(m.Values["claim_id"])+str(m.Values["artefact_id"]))
	}
	return out
}

func str(v any) string { s, _ := v.(string); return s }

func TestOrchestratorQueueGetsOnlyWhatItActsOn(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	g := startWorkflow(t, c)
	if got := queued(t, c); !slices.Equal(got, []string{"artefact_created:" + g.ID}) {
		t.Fatalf("queue after a goal = %v, want its artefact_created", got)
	}
	// A review without a claim is audit only.
	r := child(g.ID)
	r.StructuralType = blackboard.StructuralReview
	create(t, c, r)
	if n := len(queued(t, c)); n != 1 {
		t.Fatalf("a claimless review was queued (%d entries)", n)
	}
	// Bids: only the last expected bid wakes the orchestrator.
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "a", "b", "c"), BidTimeout: time.Hour})
	for _, agent := range []string{"a", "b"} {
		if err := c.SubmitBid(t.Context(), cl.ID, agent, blackboard.BidIgnore); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(queued(t, c)); n != 1 {
		t.Fatalf("%d queue entries before the last bid, want 1", n)
	}
	if err := c.SubmitBid(t.Context(), cl.ID, "c", blackboard.BidExclusive); err != nil {
		t.Fatal(err)
	}
	if got := queued(t, c); len(got) != 2 || got[1] != "bids_complete:"+cl.ID {
		t.Fatalf("queue = %v, want bids_complete for %s last", got, cl.ID)
	}
	// The audit stream still has every bid.
	if n := len(eventsOf(t, c, blackboard.EventBidSubmitted)); n != 3 {
		t.Fatalf("%d bid_submitted events, want 3", n)
	}
	// A failed workflow is queued so its claims get ended.
	if _, err := c.EndWorkflow(t.Context(), g.ID, blackboard.WorkflowFailed, "budget", 1); err != nil {
		t.Fatal(err)
	}
	if got := queued(t, c); len(got) != 3 || got[2] != "workflow_completed:" {
		t.Fatalf("queue = %v, want workflow_completed last", got)
	}
	// The queue consumer deletes what it acknowledges.
	qc, err := c.QueueConsumer(t.Context(), "orchestrator", "o")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := qc.Next(t.Context(), nil, 10, 0)
	if err != nil || len(evs) != 3 {
		t.Fatalf("Next = %d events, %v", len(evs), err)
	}
	var ids []string
	for _, e := range evs {
		ids = append(ids, e.StreamID)
	}
	if err := qc.Ack(t.Context(), ids...); err != nil {
		t.Fatal(err)
	}
	if got := queued(t, c); len(got) != 0 {
		t.Fatalf("queue after ack = %v, want empty", got)
	}
}

func TestInboxEntriesAreAcknowledgedWithTheirEffect(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	claim := pendingClaim(g, "coder")
	claim.Status = blackboard.ClaimPendingConsensus
	createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: claim, BidTimeout: time.Hour, Inbox: []blackboard.InboxMessage{{
		Agent: "coder", Kind: blackboard.MessageBidRequest, ClaimID: claim.ID, ArtefactID: g.ID, WorkflowID: g.ID,
	}}})
	in, err := c.Inbox(ctx, "coder", "cub-1")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := in.NextBids(ctx, 10, 0)
	if err != nil || len(entries) != 1 {
		t.Fatalf("inbox = %v, %v", entries, err)
	}
	if err := c.AnswerBidRequest(ctx, entries[0], blackboard.BidExclusive); err != nil {
		t.Fatal(err)
	}
	if p, err := in.PendingBids(ctx, 10); err != nil || len(p) != 0 {
		t.Fatalf("pending after the bid = %v, %v; want the request acknowledged", p, err)
	}
	// A repeated answer (a replay) is refused and still acknowledges.
	if err := c.AnswerBidRequest(ctx, entries[0], blackboard.BidExclusive); err == nil {
		t.Fatal("a second bid was accepted")
	}

	// A grant: TakeGrant leases and reads; the result releases the lease
	// and acknowledges the grant in one step.
	grant := &blackboard.Claim{ID: blackboard.NewID(), ArtefactID: g.ID, WorkflowID: g.ID,
		Status: blackboard.ClaimPendingExclusive, GrantedExclusiveAgent: "coder"}
	msg := blackboard.InboxMessage{Agent: "coder", Kind: blackboard.MessageGrant, ClaimID: grant.ID, ArtefactID: g.ID,
		WorkflowID: g.ID, Grant: blackboard.GrantExclusive, Token: "1"}
	createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: grant, Grants: map[string]string{"coder": "1"}, Inbox: []blackboard.InboxMessage{msg}})
	entries, err = in.NextGrants(ctx, 10, 0)
	if err != nil || len(entries) != 1 {
		t.Fatalf("grants = %v, %v", entries, err)
	}
	view, err := c.TakeGrant(ctx, entries[0].InboxMessage, "cub-1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if view.Claim.ID != grant.ID || view.Target.ID != g.ID || view.Workflow.ID != g.ID {
		t.Fatalf("TakeGrant read %s/%s/%s", view.Claim.ID, view.Target.ID, view.Workflow.ID)
	}
	raw := redistest.Raw(t)
	if n := raw.Exists(ctx, c.Keys().Lease(grant.ID, "coder")).Val(); n != 1 {
		t.Fatal("TakeGrant took no lease")
	}
	res := child(g.ID)
	res.ClaimID, res.ProducedByAgent = grant.ID, "coder"
	create(t, c, res, blackboard.WriteAuth{GrantToken: "1", InboxEntry: entries[0].StreamID})
	if n := raw.Exists(ctx, c.Keys().Lease(grant.ID, "coder")).Val(); n != 0 {
		t.Error("the lease outlived the result")
	}
	if p, err := in.PendingGrants(ctx, 10); err != nil || len(p) != 0 {
		t.Errorf("pending after the result = %v, %v; want the grant acknowledged", p, err)
	}
	for _, stream := range []string{c.Keys().Inbox("coder"), c.Keys().AgentGrants("coder")} {
		if n := raw.XLen(ctx, stream).Val(); n != 0 {
			t.Errorf("%s holds %d entries, want the handled ones deleted", stream, n)
		}
	}
}

func TestBidsCompleteIgnoresPredecidedBids(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	g := startWorkflow(t, c)
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "a", "b"), BidTimeout: time.Hour,
		Bids: map[string]blackboard.Bid{"x": blackboard.BidIgnore, "y": blackboard.BidIgnore}})
	if err := c.SubmitBid(t.Context(), cl.ID, "a", blackboard.BidReview); err != nil {
		t.Fatal(err)
	}
	if n := len(queued(t, c)); n != 1 {
		t.Fatalf("%d queue entries after one of two asked agents bid, want only the goal's", n)
	}
	if err := c.SubmitBid(t.Context(), cl.ID, "b", blackboard.BidExclusive); err != nil {
		t.Fatal(err)
	}
	if got := queued(t, c); len(got) != 2 || got[1] != "bids_complete:"+cl.ID {
		t.Fatalf("queue = %v, want bids_complete after the last asked agent", got)
	}
	bids, err := c.GetBids(t.Context(), cl.ID)
	if err != nil || bids["x"] != blackboard.BidIgnore || len(bids) != 4 {
		t.Fatalf("bids %v (%v), want the decided ignores kept", bids, err)
	}
}

func TestThreadHeads(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	g := startWorkflow(t, c)
	v1 := create(t, c, child(g.ID))
	v2 := create(t, c, rework(v1))
	missing := blackboard.NewID()
	heads, err := c.ThreadHeads(t.Context(), []string{v1.LogicalID, g.ID, missing})
	if err != nil || !slices.Equal(heads, []string{v2.ID, g.ID, ""}) {
		t.Fatalf("ThreadHeads = %v, %v; want [v2 goal \"\"]", heads, err)
	}
}

// A result's queue entry names its claim's target, and the orchestrator's
// read of the claim brings the phase's artefacts and shared memory along.
func TestResultEntryNamesTheTargetReadWithTheClaim(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	cl := &blackboard.Claim{ID: blackboard.NewID(), ArtefactID: g.ID, WorkflowID: g.ID,
		Status: blackboard.ClaimPendingExclusive, GrantedExclusiveAgent: "coder"}
	createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: cl, Grants: map[string]string{"coder": "1"}})
	res := child(g.ID)
	res.ClaimID, res.ProducedByAgent = cl.ID, "coder"
	create(t, c, res, blackboard.WriteAuth{GrantToken: "1"})

	msgs, err := redistest.Raw(t).XRange(ctx, c.Keys().OrchestratorQueue(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var target string
	found := false
	for _, m := range msgs {
		if str(m.Values["artefact_id"]) == res.ID {
			target, found = str(m.Values["target_id"]), true
		}
	}
	if !found || target != g.ID {
		t.Fatalf("result's queue entry found %v with target_id %q, want %s", found, target, g.ID)
	}

	st, err := c.GetClaimStateAndPhase(ctx, cl.ID, g.ID, []string{target, res.ID, blackboard.NewID()})
	if err != nil {
		t.Fatal(err)
	}
	if st.Claim.ID != cl.ID || st.Outputs["coder"] != res.ID || st.Phase == nil {
		t.Fatalf("state = claim %s outputs %v phase %v", st.Claim.ID, st.Outputs, st.Phase)
	}
	if a := st.Phase.Artefacts[g.ID]; a == nil || a.Payload != g.Payload {
		t.Errorf("target read with the claim = %+v", a)
	}
	if a := st.Phase.Artefacts[res.ID]; a == nil || a.ClaimID != cl.ID {
		t.Errorf("result read with the claim = %+v", a)
	}
	if len(st.Phase.Artefacts) != 3 {
		t.Errorf("phase read %d ids, want 3 (a missing one as nil)", len(st.Phase.Artefacts))
	}
	// A wrong workflow hint reads no phase (its shared memory would be
	// another workflow's).
	st, err = c.GetClaimStateAndPhase(ctx, cl.ID, blackboard.NewID(), []string{target})
	if err != nil || st.Phase != nil {
		t.Errorf("with a wrong hint: phase %v, %v; want none", st.Phase, err)
	}
}

// A caller that counts the workflow's end itself (Transition.CountEnd)
// gets it in the result and no workflow_completed entry is queued; a caller
// that does not still gets the entry.
func TestTransitionThatCompletesTheWorkflowReportsTheEnd(t *testing.T) {
	t.Parallel()
	for _, counts := range []bool{true, false} {
		t.Run("counts="+strconv.FormatBool(counts), func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			g := startWorkflow(t, c)
			cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true})
			tr := blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: g.ID, From: cl.Status, Rev: cl.Rev,
				To: blackboard.ClaimComplete, CloseItem: true, CountEnd: counts}
			res, err := c.TransitionClaim(t.Context(), tr)
			if err != nil {
				t.Fatal(err)
			}
			w, err := c.GetWorkflow(t.Context(), g.ID)
			if err != nil || w.Status != blackboard.WorkflowCompleted {
				t.Fatalf("workflow %+v (%v), want completed", w, err)
			}
			if res.Ended != counts {
				t.Errorf("Ended = %v for the step that completed the workflow, with CountEnd %v", res.Ended, counts)
			}
			queuedEnd := slices.Contains(queued(t, c), "workflow_completed:")
			if queuedEnd == counts {
				t.Errorf("workflow_completed queued = %v with CountEnd = %v; want it queued only without", queuedEnd, counts)
			}
		})
	}
}

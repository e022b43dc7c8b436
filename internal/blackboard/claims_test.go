package blackboard_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// bidRequest is the inbox message asking agent to bid on cl for a.
func bidRequest(agent string, cl *blackboard.Claim, a *blackboard.Artefact) blackboard.InboxMessage {
	return blackboard.InboxMessage{
		Agent: agent, Kind: blackboard.MessageBidRequest, ClaimID: cl.ID, ArtefactID: a.ID,
		WorkflowID: a.WorkflowID, ArtefactType: a.Type, StructuralType: a.StructuralType,
		ProducedByRole: a.ProducedByRole,
	}
}

// grantMessage is the inbox message granting cl to agent.
func grantMessage(agent string, cl *blackboard.Claim, kind blackboard.GrantKind, token string) blackboard.InboxMessage {
	return blackboard.InboxMessage{
		Agent: agent, Kind: blackboard.MessageGrant, ClaimID: cl.ID, ArtefactID: cl.ArtefactID,
		WorkflowID: cl.WorkflowID, Grant: kind, Token: token,
	}
}

// readInbox reads every new entry of agent's bid requests and grants
// (without blocking).
func readInbox(tb testing.TB, c *blackboard.Client, agent string) []blackboard.InboxEntry {
	tb.Helper()
	in, err := c.Inbox(tb.Context(), agent, "test-consumer")
	if err != nil {
		tb.Fatal(err)
	}
	entries, err := in.NextBids(tb.Context(), 100, 0)
	if err != nil {
		tb.Fatal(err)
	}
	grants, err := in.NextGrants(tb.Context(), 100, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return append(entries, grants...)
}

func TestCreateClaimDeliversBidRequests(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	a := create(t, c, child(g.ID))
	cl := pendingClaim(a, "coder", "reviewer")
	cl.Iteration = 1
	msgs := []blackboard.InboxMessage{bidRequest("coder", cl, a), bidRequest("reviewer", cl, a)}
	got := createClaim(t, c, blackboard.NewClaim{Epoch: 1,
		Claim: cl, ByArtefact: true, BidTimeout: 30 * time.Second, Inbox: msgs,
		Events: []blackboard.Event{{Type: blackboard.EventClaimGranted, ClaimID: cl.ID, Fields: map[string]string{"note": "extra"}}},
	})

	// The script sets the timestamps, deadline and priority.
	if got.CreatedAtMs == 0 || got.UpdatedAtMs != got.CreatedAtMs || got.BidDeadlineMs != got.CreatedAtMs+30000 {
		t.Errorf("created %d updated %d deadline %d: want updated = created and deadline = created+30000",
			got.CreatedAtMs, got.UpdatedAtMs, got.BidDeadlineMs)
	}
	want := *cl
	want.CreatedAtMs, want.UpdatedAtMs, want.BidDeadlineMs = got.CreatedAtMs, got.UpdatedAtMs, got.BidDeadlineMs
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("stored claim:\n got %+v\nwant %+v", got, &want)
	}
	if due, err := raw.ZScore(ctx, c.Keys().Timers(), cl.ID).Result(); err != nil || int64(due) != got.BidDeadlineMs {
		t.Errorf("timer = %v, %v; want the bid deadline %d", due, err, got.BidDeadlineMs)
	}
	if id, err := c.ClaimForArtefact(ctx, a.ID); err != nil || id != cl.ID {
		t.Errorf("ClaimForArtefact = %q, %v; want %s", id, err, cl.ID)
	}
	for _, list := range []func() ([]string, error){
		func() ([]string, error) { return c.ActiveClaims(ctx) },
		func() ([]string, error) { return c.WorkflowClaims(ctx, g.ID) },
	} {
		if ids, err := list(); err != nil || !slices.Equal(ids, []string{cl.ID}) {
			t.Errorf("claim index = %v, %v; want [%s]", ids, err, cl.ID)
		}
	}
	if id, err := c.ResolveID(ctx, blackboard.PrefixClaim, cl.ID[:8]); err != nil || id != cl.ID {
		t.Errorf("ResolveID(claim) = %q, %v", id, err)
	}

	// One inbox entry per agent, with every field.
	for _, m := range msgs {
		entries := readInbox(t, c, m.Agent)
		if len(entries) != 1 {
			t.Fatalf("%s inbox has %d entries, want 1", m.Agent, len(entries))
		}
		if entries[0].InboxMessage != m {
			t.Errorf("%s inbox:\n got %+v\nwant %+v", m.Agent, entries[0].InboxMessage, m)
		}
	}

	// claim_created, then the caller's extra event, stamped alike.
	evs := allEvents(t, c)
	created, extra := evs[len(evs)-2], evs[len(evs)-1]
	if created.Type != blackboard.EventClaimCreated || created.ClaimID != cl.ID || created.ArtefactID != a.ID ||
		created.WorkflowID != g.ID || created.Field("status") != "pending_consensus" || created.TsMs != got.CreatedAtMs {
		t.Errorf("claim_created = %+v", created)
	}
	if extra.Type != blackboard.EventClaimGranted || extra.Field("note") != "extra" || extra.TsMs != got.CreatedAtMs {
		t.Errorf("extra event = %+v", extra)
	}
	// A regular claim takes over its artefact's open item.
	if wf, err := c.GetWorkflow(ctx, g.ID); err != nil || wf.OpenItems != 2 {
		t.Errorf("open items = %v (%v), want 2 (goal and child)", wf, err)
	}
}

func TestCreateClaimRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	redistest.Shared(t) // each case makes its own client; skip the whole table in -short mode
	cases := []struct {
		name    string
		prepare func(t *testing.T, c *blackboard.Client) blackboard.NewClaim
		want    error
		which   string // for *BudgetError
	}{
		{"artefact budget", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			g := startWorkflow(t, c)
			a := create(t, c, child(g.ID)) // the workflow now holds 2 artefacts
			return blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(a, "coder"), ByArtefact: true,
				Budget: blackboard.Budget{MaxArtefacts: 1}, Inbox: []blackboard.InboxMessage{{Agent: "coder", Kind: blackboard.MessageBidRequest}}}
		}, blackboard.ErrBudgetExceeded, "artefacts"},
		{"depth budget", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			g := startWorkflow(t, c)
			a := create(t, c, child(g.ID))
			return blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(a), ByArtefact: true, Budget: blackboard.Budget{MaxDepth: 2, Depth: 3}}
		}, blackboard.ErrBudgetExceeded, "depth"},
		{"workflow ended", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			g := startWorkflow(t, c)
			a := create(t, c, child(g.ID))
			if ended, err := c.EndWorkflow(t.Context(), g.ID, blackboard.WorkflowCancelled, "sett cancel", 1); err != nil || !ended {
				t.Fatalf("EndWorkflow = %v, %v", ended, err)
			}
			return blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(a), ByArtefact: true}
		}, blackboard.ErrWorkflowEnded, ""},
		{"unknown workflow", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			startWorkflow(t, c)
			cl := pendingClaim(child(blackboard.NewID()))
			return blackboard.NewClaim{Epoch: 1, Claim: cl, ByArtefact: true}
		}, blackboard.ErrNotFound, ""},
		{"existing id", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			g := startWorkflow(t, c)
			first := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g)})
			again := pendingClaim(create(t, c, child(g.ID)))
			again.ID = first.ID
			return blackboard.NewClaim{Epoch: 1, Claim: again, AddsItem: true}
		}, blackboard.ErrExists, ""},
		{"stale epoch", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			g := startWorkflow(t, c)
			l := lead(t, c, "orch-a")
			if err := c.Resign(t.Context(), "orch-a"); err != nil {
				t.Fatal(err)
			}
			lead(t, c, "orch-b")
			return blackboard.NewClaim{Claim: pendingClaim(g), ByArtefact: true, Epoch: l.Epoch}
		}, blackboard.ErrFenced, ""},
		{"final initial status", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			g := startWorkflow(t, c)
			cl := pendingClaim(g)
			cl.Status = blackboard.ClaimComplete
			return blackboard.NewClaim{Epoch: 1, Claim: cl}
		}, blackboard.ErrInvalid, ""},
		{"bad inbox agent", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			g := startWorkflow(t, c)
			return blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), Inbox: []blackboard.InboxMessage{{Agent: "a:b", Kind: blackboard.MessageGrant}}}
		}, blackboard.ErrInvalid, ""},
		// A claim the decoder would refuse must not be written: it would
		// sit in the active index, unreadable, for ever.
		{"unreadable context id", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			g := startWorkflow(t, c)
			cl := pendingClaim(g)
			cl.AdditionalContextIDs = []string{"not-an-id"}
			return blackboard.NewClaim{Epoch: 1, Claim: cl}
		}, blackboard.ErrInvalid, ""},
		{"unreadable parent claim id", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			g := startWorkflow(t, c)
			cl := pendingClaim(g)
			cl.ParentClaimID = "parent"
			return blackboard.NewClaim{Epoch: 1, Claim: cl}
		}, blackboard.ErrInvalid, ""},
		{"negative iteration", func(t *testing.T, c *blackboard.Client) blackboard.NewClaim {
			g := startWorkflow(t, c)
			cl := pendingClaim(g)
			cl.Iteration = -1
			return blackboard.NewClaim{Epoch: 1, Claim: cl}
		}, blackboard.ErrInvalid, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			raw := redistest.Raw(t)
			nc := tc.prepare(t, c)
			before := snapshot(t, raw, c)
			r, err := c.CreateClaim(t.Context(), nc)
			id, created := r.ID, r.Created
			wantErr(t, err, tc.want)
			if id != "" || created {
				t.Errorf("refused claim returned id %q created %v", id, created)
			}
			if tc.which != "" {
				var be *blackboard.BudgetError
				if !errors.As(err, &be) || be.Which != tc.which {
					t.Errorf("error %v: want *BudgetError with Which %q", err, tc.which)
				}
			}
			assertUnchanged(t, raw, c, before)
		})
	}
}

func TestBudgetError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		err  *blackboard.BudgetError
		want string
	}{
		{"artefacts", &blackboard.BudgetError{Which: "artefacts", Limit: 50}, "max_workflow_artefacts (50)"},
		{"depth", &blackboard.BudgetError{Which: "depth", Limit: 8}, "max_chain_depth (8)"},
	}
	for _, tc := range cases {
		if !strings.Contains(tc.err.Error(), tc.want) || !errors.Is(tc.err, blackboard.ErrBudgetExceeded) {
			t.Errorf("%s: %q does not name %q or wrap ErrBudgetExceeded", tc.name, tc.err, tc.want)
		}
	}
}

func TestCreateClaimWithinBudget(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	g := startWorkflow(t, c)
	a := create(t, c, child(g.ID)) // 2 artefacts
	createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(a), ByArtefact: true,
		Budget: blackboard.Budget{MaxArtefacts: 2, MaxDepth: 1, Depth: 1}})
}

// TestCreateClaimByArtefactRace has 50 handlers create the regular claim
// of one artefact at once, as duplicated events would: one claim results.
func TestCreateClaimByArtefactRace(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	a := create(t, c, child(g.ID))

	const n = 50
	type result struct {
		id      string
		created bool
		err     error
	}
	results := make([]result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			nc := blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(a, "coder"), ByArtefact: true,
				Inbox: []blackboard.InboxMessage{{Agent: "coder", Kind: blackboard.MessageBidRequest, ArtefactID: a.ID}}}
			<-start
			r, err := c.CreateClaim(ctx, nc)
			results[i] = result{r.ID, r.Created, err}
		})
	}
	close(start)
	wg.Wait()

	winners := 0
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("handler %d: %v", i, r.err)
		}
		if r.created {
			winners++
		}
		if r.id != results[0].id {
			t.Errorf("handler %d got claim %s, handler 0 got %s", i, r.id, results[0].id)
		}
	}
	if winners != 1 {
		t.Errorf("%d handlers created a claim, want exactly 1", winners)
	}
	if got := eventsOf(t, c, blackboard.EventClaimCreated); len(got) != 1 || got[0].ClaimID != results[0].id {
		t.Errorf("claim_created events = %+v, want one for %s", got, results[0].id)
	}
	if n, err := raw.ZCard(ctx, c.Keys().ActiveClaims()).Result(); err != nil || n != 1 {
		t.Errorf("index:claims:active has %d members (%v), want 1", n, err)
	}
	if got := readInbox(t, c, "coder"); len(got) != 1 {
		t.Errorf("coder got %d bid requests, want 1", len(got))
	}
	if id, err := c.ClaimForArtefact(ctx, a.ID); err != nil || id != results[0].id {
		t.Errorf("ClaimForArtefact = %s, %v; want %s", id, err, results[0].id)
	}
}

// TestTransitionClaimRace has 20 handlers move one claim from the same
// status and rev at once: one wins, the rest see ErrStaleStatus.
func TestTransitionClaimRace(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "coder"), ByArtefact: true})

	const n = 20
	errs := make([]error, n)
	revs := make([]int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			res, err := c.TransitionClaim(ctx, blackboard.Transition{Epoch: 1,
				ClaimID: cl.ID, WorkflowID: g.ID, From: blackboard.ClaimPendingConsensus, Rev: cl.Rev,
				To: blackboard.ClaimPendingExclusive, Set: blackboard.ClaimPatch{GrantedExclusiveAgent: "coder"},
				Grants: map[string]string{"coder": "1"},
			})
			revs[i], errs[i] = res.Rev, err
		})
	}
	close(start)
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
			if revs[i] != cl.Rev+1 {
				t.Errorf("winner got rev %d, want %d", revs[i], cl.Rev+1)
			}
		case !errors.Is(err, blackboard.ErrStaleStatus):
			t.Errorf("handler %d: %v, want nil or ErrStaleStatus", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d transitions applied, want exactly 1", won)
	}
	if got := eventsOf(t, c, blackboard.EventClaimTransitioned); len(got) != 1 {
		t.Errorf("%d claim_transitioned events, want 1", len(got))
	}
}

// transition applies t and fails the test on error.
func transition(tb testing.TB, c *blackboard.Client, tr blackboard.Transition) int {
	tb.Helper()
	res, err := c.TransitionClaim(tb.Context(), tr)
	if err != nil {
		tb.Fatalf("transition %s -> %s: %v", tr.From, tr.To, err)
	}
	return res.Rev
}

func TestTransitionClaimRefusals(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	g := startWorkflow(t, c)
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "coder"), ByArtefact: true})
	done := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(create(t, c, child(g.ID)))})
	transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: done.ID, WorkflowID: g.ID, From: done.Status, Rev: 0, To: blackboard.ClaimComplete})
	base := blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: g.ID, From: blackboard.ClaimPendingConsensus, Rev: 0, To: blackboard.ClaimPendingReview}

	cases := []struct {
		name   string
		mutate func(tr *blackboard.Transition)
		want   error
	}{
		{"wrong status", func(tr *blackboard.Transition) { tr.From = blackboard.ClaimPendingApproval }, blackboard.ErrStaleStatus},
		{"wrong rev", func(tr *blackboard.Transition) { tr.Rev = 3 }, blackboard.ErrStaleStatus},
		{"wrong status, rev skipped", func(tr *blackboard.Transition) { tr.From, tr.Rev = blackboard.ClaimPendingReview, -1 }, blackboard.ErrStaleStatus},
		{"unknown claim", func(tr *blackboard.Transition) { tr.ClaimID = blackboard.NewID() }, blackboard.ErrNotFound},
		{"bad claim id", func(tr *blackboard.Transition) { tr.ClaimID = "c" }, blackboard.ErrInvalid},
		{"bad workflow id", func(tr *blackboard.Transition) { tr.WorkflowID = "w" }, blackboard.ErrInvalid},
		{"unknown status", func(tr *blackboard.Transition) { tr.To = "done" }, blackboard.ErrInvalid},
		// Final statuses are final: a claim leaving one would be live but
		// missing from the active index, so nothing would reconcile it.
		{"out of a final status", func(tr *blackboard.Transition) {
			tr.ClaimID, tr.From, tr.Rev, tr.To = done.ID, blackboard.ClaimComplete, 1, blackboard.ClaimPendingReview
		}, blackboard.ErrInvalid},
		{"unreadable feedback claim id", func(tr *blackboard.Transition) { tr.Set.FeedbackClaimID = "fb" }, blackboard.ErrInvalid},
		{"negative attempts", func(tr *blackboard.Transition) { tr.Set.Attempts = -1 }, blackboard.ErrInvalid},
		{"oversized reason", func(tr *blackboard.Transition) {
			tr.Set.TerminationReason = strings.Repeat("r", blackboard.MaxFieldBytes+1)
		}, blackboard.ErrInvalid},
		{"bad inbox agent", func(tr *blackboard.Transition) {
			tr.Inbox = []blackboard.InboxMessage{{Agent: "Coder", Kind: blackboard.MessageGrant}}
		}, blackboard.ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := base
			tc.mutate(&tr)
			before := snapshot(t, raw, c)
			_, err := c.TransitionClaim(t.Context(), tr)
			wantErr(t, err, tc.want)
			assertUnchanged(t, raw, c, before)
		})
	}

	t.Run("stale epoch", func(t *testing.T) {
		old := lead(t, c, "orch-a")
		if err := c.Resign(t.Context(), "orch-a"); err != nil {
			t.Fatal(err)
		}
		cur := lead(t, c, "orch-b")
		before := snapshot(t, raw, c)
		tr := base
		tr.Epoch = old.Epoch
		_, err := c.TransitionClaim(t.Context(), tr)
		wantErr(t, err, blackboard.ErrFenced)
		assertUnchanged(t, raw, c, before)
		tr.Epoch = cur.Epoch
		if rev := transition(t, c, tr); rev != 1 {
			t.Errorf("rev = %d, want 1", rev)
		}
	})
}

// TestTransitionClaimFinalClosesItem walks a workflow to completion: final
// claims leave the active index and timers, and the workflow completes
// exactly once, when its last open item closes.
func TestTransitionClaimFinalClosesItem(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	k := c.Keys()
	g := startWorkflow(t, c) // open items: 1 (the goal)

	main := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true, BidTimeout: time.Minute})
	// A feedback claim is new open work: 2.
	fb := pendingClaim(g)
	fb.Status, fb.GrantedExclusiveAgent, fb.ParentClaimID = blackboard.ClaimPendingAssignment, "coder", main.ID
	feedback := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: fb, AddsItem: true, TimerIn: time.Minute})
	// A claim that does not add an item (it would take over an artefact's).
	extra := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g)})
	openItems := func() int {
		t.Helper()
		wf, err := c.GetWorkflow(ctx, g.ID)
		if err != nil {
			t.Fatal(err)
		}
		return wf.OpenItems
	}
	if n := openItems(); n != 2 {
		t.Fatalf("open items = %d, want 2", n)
	}

	transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: feedback.ID, WorkflowID: g.ID, From: feedback.Status, Rev: 0,
		To: blackboard.ClaimComplete, CloseItem: true, Set: blackboard.ClaimPatch{CompletionReason: "reworked"}})
	if n := openItems(); n != 1 {
		t.Errorf("open items = %d after the feedback claim, want 1", n)
	}
	if got := eventsOf(t, c, blackboard.EventWorkflowCompleted); len(got) != 0 {
		t.Fatalf("workflow completed with work open: %+v", got)
	}

	transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: main.ID, WorkflowID: g.ID, From: main.Status, Rev: 0,
		To: blackboard.ClaimComplete, CloseItem: true, ArmTimer: true, TimerIn: time.Hour})
	wf, err := c.GetWorkflow(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wf.Status != blackboard.WorkflowCompleted || wf.OpenItems != 0 || wf.Outcome == "" || wf.EndedAtMs == 0 {
		t.Errorf("workflow = %+v, want completed with 0 open items, an outcome and an end time", wf)
	}
	// Closing another item of the ended workflow neither reopens nor
	// re-announces it.
	transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: extra.ID, WorkflowID: g.ID, From: extra.Status, Rev: 0,
		To: blackboard.ClaimTerminated, CloseItem: true, Set: blackboard.ClaimPatch{TerminationReason: "workflow ended"}})
	if n := openItems(); n != 0 {
		t.Errorf("open items = %d after the workflow ended, want 0", n)
	}
	completed := eventsOf(t, c, blackboard.EventWorkflowCompleted)
	if len(completed) != 1 || completed[0].Field("status") != "completed" || completed[0].WorkflowID != g.ID {
		t.Errorf("workflow_completed events = %+v, want exactly one with status completed", completed)
	}

	// Final claims are in neither the active index nor the timers, even
	// with ArmTimer set.
	if ids, err := c.ActiveClaims(ctx); err != nil || len(ids) != 0 {
		t.Errorf("active claims = %v, %v; want none", ids, err)
	}
	if n, err := raw.ZCard(ctx, k.Timers()).Result(); err != nil || n != 0 {
		t.Errorf("%d timers left (%v), want none", n, err)
	}
	got, err := c.GetClaim(ctx, main.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != blackboard.ClaimComplete || got.Rev != 1 || got.UpdatedAtMs < got.CreatedAtMs {
		t.Errorf("claim = %+v, want complete at rev 1", got)
	}
	// The workflow's claims stay listed for the audit.
	if ids, err := c.WorkflowClaims(ctx, g.ID); err != nil || len(ids) != 3 {
		t.Errorf("workflow claims = %v, %v; want 3", ids, err)
	}
}

func TestTransitionClaimFailWorkflow(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true})
	transition(t, c, blackboard.Transition{Epoch: 1,
		ClaimID: cl.ID, WorkflowID: g.ID, From: cl.Status, Rev: 0, To: blackboard.ClaimTerminated,
		Set:          blackboard.ClaimPatch{TerminationReason: "review policy failed"},
		FailWorkflow: true, FailReason: "review policy failed", CloseItem: true,
	})
	wf, err := c.GetWorkflow(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wf.Status != blackboard.WorkflowFailed || wf.Outcome != "review policy failed" {
		t.Errorf("workflow = %+v, want failed with the reason", wf)
	}
	ended := eventsOf(t, c, blackboard.EventWorkflowCompleted)
	if len(ended) != 1 || ended[0].Field("status") != "failed" || ended[0].Field("reason") != "review policy failed" {
		t.Errorf("workflow_completed events = %+v, want one, failed, with the reason", ended)
	}
	got, err := c.GetClaim(ctx, cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.TerminationReason != "review policy failed" {
		t.Errorf("termination reason = %q", got.TerminationReason)
	}
}

func TestEndWorkflow(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	ended, err := c.EndWorkflow(ctx, g.ID, blackboard.WorkflowCancelled, "sett cancel", 1)
	if err != nil || !ended {
		t.Fatalf("EndWorkflow = %v, %v; want true", ended, err)
	}
	if ended, err := c.EndWorkflow(ctx, g.ID, blackboard.WorkflowFailed, "again", 1); err != nil || ended {
		t.Errorf("second EndWorkflow = %v, %v; want false, nil", ended, err)
	}
	wf, err := c.GetWorkflow(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wf.Status != blackboard.WorkflowCancelled || wf.Outcome != "sett cancel" {
		t.Errorf("workflow = %+v, want cancelled by sett cancel", wf)
	}
	if got := eventsOf(t, c, blackboard.EventWorkflowCompleted); len(got) != 1 || got[0].Field("status") != "cancelled" {
		t.Errorf("workflow_completed events = %+v, want exactly one", got)
	}
	_, err = c.CreateClaim(ctx, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true})
	wantErr(t, err, blackboard.ErrWorkflowEnded)

	cases := []struct {
		name   string
		id     string
		status blackboard.WorkflowStatus
		want   error
	}{
		{"unknown workflow", blackboard.NewID(), blackboard.WorkflowFailed, blackboard.ErrNotFound},
		{"bad id", "w", blackboard.WorkflowFailed, blackboard.ErrInvalid},
		{"running is not an end", g.ID, blackboard.WorkflowRunning, blackboard.ErrInvalid},
		{"unknown status", g.ID, "done", blackboard.ErrInvalid},
	}
	for _, tc := range cases {
		_, err := c.EndWorkflow(ctx, tc.id, tc.status, "x", 1)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestTransitionClaimIgnoreBids(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "coder", "tester", "linter"), ByArtefact: true})
	if err := c.SubmitBid(ctx, cl.ID, "coder", blackboard.BidExclusive); err != nil {
		t.Fatal(err)
	}
	transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: g.ID, From: cl.Status, Rev: 0,
		To: blackboard.ClaimPendingExclusive, IgnoreBids: []string{"coder", "tester", "linter"}})
	bids, err := c.GetBids(ctx, cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]blackboard.Bid{"coder": blackboard.BidExclusive, "tester": blackboard.BidIgnore, "linter": blackboard.BidIgnore}
	if !reflect.DeepEqual(bids, want) {
		t.Errorf("bids = %v, want %v (an existing bid is never overwritten)", bids, want)
	}
}

// TestTransitionClaimRecordsDecidedBids: a transition records the bids
// decided without asking (an approved claim's consensus starting), keeps
// a bid already there, and refuses an agent name or bid CreateClaim would
// refuse, writing nothing.
func TestTransitionClaimRecordsDecidedBids(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "tester"), ByArtefact: true})
	if err := c.SubmitBid(ctx, cl.ID, "tester", blackboard.BidClaim); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		bids map[string]blackboard.Bid
	}{
		{"an agent name with a colon", map[string]blackboard.Bid{"co:der": blackboard.BidExclusive}},
		{"an unknown bid", map[string]blackboard.Bid{"coder": "maybe"}},
	} {
		_, err := c.TransitionClaim(ctx, blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: g.ID, From: cl.Status, Rev: 0,
			To: blackboard.ClaimPendingConsensus, Bids: tc.bids})
		if !errors.Is(err, blackboard.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
		}
	}
	transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: g.ID, From: cl.Status, Rev: 0,
		To: blackboard.ClaimPendingConsensus, Bids: map[string]blackboard.Bid{
			"coder": blackboard.BidExclusive, "linter": blackboard.BidIgnore, "tester": blackboard.BidIgnore}})
	bids, err := c.GetBids(ctx, cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]blackboard.Bid{"coder": blackboard.BidExclusive, "linter": blackboard.BidIgnore, "tester": blackboard.BidClaim}
	if !reflect.DeepEqual(bids, want) {
		t.Errorf("bids = %v, want %v (an existing bid is never overwritten)", bids, want)
	}
}

func TestTransitionClaimGrants(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "r1", "r2", "coder"), ByArtefact: true})
	msgs := []blackboard.InboxMessage{
		grantMessage("r1", cl, blackboard.GrantReview, "1"),
		grantMessage("r2", cl, blackboard.GrantReview, "1"),
	}
	rev := transition(t, c, blackboard.Transition{Epoch: 1,
		ClaimID: cl.ID, WorkflowID: g.ID, From: cl.Status, Rev: cl.Rev, To: blackboard.ClaimPendingReview,
		Set:    blackboard.ClaimPatch{GrantedReviewAgents: []string{"r1", "r2"}, Attempts: 1},
		Grants: map[string]string{"r1": "1", "r2": "1"}, Inbox: msgs, ArmTimer: true, TimerIn: time.Hour,
		Events: []blackboard.Event{{Type: blackboard.EventClaimGranted, ClaimID: cl.ID, WorkflowID: g.ID, Agent: "r1"}},
	})
	if rev != 1 {
		t.Errorf("rev = %d, want 1", rev)
	}
	for _, m := range msgs {
		entries := readInbox(t, c, m.Agent)
		if len(entries) != 1 || entries[0].InboxMessage != m {
			t.Errorf("%s inbox = %+v, want the grant %+v", m.Agent, entries, m)
		}
	}
	st, err := c.GetClaimState(ctx, cl.ID, "", []string{"r1"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Claim.Status != blackboard.ClaimPendingReview || !slices.Equal(st.Claim.GrantedAgents(), []string{"r1", "r2"}) ||
		st.Claim.Attempts != 1 || st.Claim.Rev != 1 {
		t.Errorf("claim = %+v", st.Claim)
	}
	if !reflect.DeepEqual(st.Grants, map[string]string{"r1": "1", "r2": "1"}) {
		t.Errorf("grants = %v", st.Grants)
	}
	if st.Workflow == nil || st.Workflow.ID != g.ID || st.LiveLeases["r1"] || st.NowMs < st.Claim.UpdatedAtMs {
		t.Errorf("claim state = %+v", st)
	}
	// TimerIn arms the timer relative to the transition's server time.
	due, err := raw.ZScore(ctx, c.Keys().Timers(), cl.ID).Result()
	if err != nil || int64(due) != st.Claim.UpdatedAtMs+time.Hour.Milliseconds() {
		t.Errorf("timer = %v, %v; want updated_at_ms + 1h = %d", due, err, st.Claim.UpdatedAtMs+3600000)
	}
	// The transition event comes before the caller's extra event.
	evs := allEvents(t, c)
	tr, extra := evs[len(evs)-2], evs[len(evs)-1]
	if tr.Type != blackboard.EventClaimTransitioned || tr.Field("from") != "pending_consensus" || tr.Field("to") != "pending_review" {
		t.Errorf("transition event = %+v", tr)
	}
	if extra.Type != blackboard.EventClaimGranted || extra.Agent != "r1" {
		t.Errorf("extra event = %+v", extra)
	}
	// A re-grant under a new token: the old token is stale now.
	transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: g.ID, From: blackboard.ClaimPendingReview, Rev: 1,
		To: blackboard.ClaimPendingReview, Grants: map[string]string{"r1": "2"}})
	err = c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "r1", Token: "1", Holder: "cub-1", TTL: time.Minute})
	wantErr(t, err, blackboard.ErrStaleGrant)
	// Without ArmTimer the timer stays where it was.
	if again, _ := raw.ZScore(ctx, c.Keys().Timers(), cl.ID).Result(); again != due {
		t.Errorf("timer moved from %v to %v without ArmTimer", due, again)
	}
}

func TestArmTimer(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	id := blackboard.NewID()
	for _, at := range []int64{1732237000123, 1732237999999} { // re-arming replaces
		if err := c.ArmTimer(ctx, id, at); err != nil {
			t.Fatal(err)
		}
		if got, err := raw.ZScore(ctx, c.Keys().Timers(), id).Result(); err != nil || int64(got) != at {
			t.Errorf("timer = %v, %v; want %d", got, err, at)
		}
	}
	if n, _ := raw.ZCard(ctx, c.Keys().Timers()).Result(); n != 1 {
		t.Errorf("%d timers, want 1", n)
	}
}

func TestSubmitBid(t *testing.T) {
	t.Parallel()
	redistest.Shared(t) // each case makes its own client; skip the whole table in -short mode
	cases := []struct {
		name  string
		agent string
		bid   blackboard.Bid
		// before runs first on the claim (pending_consensus, bidders coder
		// and tester).
		before func(t *testing.T, c *blackboard.Client, cl *blackboard.Claim)
		want   error
	}{
		{"first bid", "coder", blackboard.BidClaim, nil, nil},
		{"duplicate", "coder", blackboard.BidExclusive, func(t *testing.T, c *blackboard.Client, cl *blackboard.Claim) {
			if err := c.SubmitBid(t.Context(), cl.ID, "coder", blackboard.BidClaim); err != nil {
				t.Fatal(err)
			}
		}, blackboard.ErrExists},
		{"not invited", "linter", blackboard.BidClaim, nil, blackboard.ErrNotInvited},
		{"a prefix of an invited name", "code", blackboard.BidClaim, nil, blackboard.ErrNotInvited},
		{"an invited name plus a suffix", "tester-2", blackboard.BidClaim, nil, blackboard.ErrNotInvited},
		{"after consensus", "tester", blackboard.BidReview, func(t *testing.T, c *blackboard.Client, cl *blackboard.Claim) {
			transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status, Rev: 0, To: blackboard.ClaimPendingParallel})
		}, blackboard.ErrStaleStatus},
		{"invalid bid", "coder", "maybe", nil, blackboard.ErrInvalid},
		{"invalid agent", "Coder", blackboard.BidClaim, nil, blackboard.ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			raw := redistest.Raw(t)
			g := startWorkflow(t, c)
			cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "coder", "tester"), ByArtefact: true})
			if tc.before != nil {
				tc.before(t, c, cl)
			}
			before := snapshot(t, raw, c)
			err := c.SubmitBid(t.Context(), cl.ID, tc.agent, tc.bid)
			if tc.want != nil {
				wantErr(t, err, tc.want)
				assertUnchanged(t, raw, c, before)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			bids, err := c.GetBids(t.Context(), cl.ID)
			if err != nil || !reflect.DeepEqual(bids, map[string]blackboard.Bid{tc.agent: tc.bid}) {
				t.Errorf("bids = %v, %v", bids, err)
			}
			ev := eventsOf(t, c, blackboard.EventBidSubmitted)
			if len(ev) != 1 || ev[0].ClaimID != cl.ID || ev[0].Agent != tc.agent || ev[0].WorkflowID != g.ID ||
				ev[0].Field("bid") != string(tc.bid) {
				t.Errorf("bid_submitted events = %+v", ev)
			}
		})
	}
	t.Run("unknown claim", func(t *testing.T) {
		t.Parallel()
		c := redistest.Client(t)
		err := c.SubmitBid(t.Context(), blackboard.NewID(), "coder", blackboard.BidClaim)
		wantErr(t, err, blackboard.ErrNotFound)
	})
}

func TestGetClaims(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true})
	missing := blackboard.NewID()
	got, err := c.GetClaims(ctx, []string{missing, cl.ID})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []*blackboard.Claim{nil, cl}) {
		t.Errorf("GetClaims = %v", got)
	}
	_, err = c.GetClaim(ctx, missing)
	wantErr(t, err, blackboard.ErrNotFound)
	_, err = c.GetClaimState(ctx, missing, "", nil)
	wantErr(t, err, blackboard.ErrNotFound)
	_, err = c.ClaimForArtefact(ctx, blackboard.NewID())
	wantErr(t, err, blackboard.ErrNotFound)
	// A wrong workflow hint costs a round trip, not correctness.
	st, err := c.GetClaimState(ctx, cl.ID, blackboard.NewID(), nil)
	if err != nil || st.Workflow.ID != g.ID {
		t.Errorf("GetClaimState with a wrong hint = %+v, %v", st, err)
	}
}

// TestCreateClaimCountsHoldsASlot: a claim created with Counts (a
// feedback claim continuing its parent's work) holds a scheduler slot from
// creation; one without does not.
func TestCreateClaimCountsHoldsASlot(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	g := startWorkflow(t, c)
	for _, counts := range []bool{true, false} {
		cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "coder"), AddsItem: true, Counts: counts})
		held, err := raw.SIsMember(t.Context(), c.Keys().Running(), cl.ID).Result()
		if err != nil {
			t.Fatal(err)
		}
		if held != counts {
			t.Errorf("Counts=%v: claim in the scheduler's running set = %v", counts, held)
		}
	}
}

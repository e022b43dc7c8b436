package blackboard_test

import (
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/redistest"
)

// planFor returns a grant plan with limit as max_concurrent_claims that
// grants kind to agent when the bids are expect: review grants allow 2
// attempts and the others 3.
func planFor(limit int, agent string, kind blackboard.GrantKind, expect map[string]blackboard.Bid) *blackboard.GrantPlan {
	phase := map[blackboard.GrantKind]string{blackboard.GrantReview: "review", blackboard.GrantClaim: "parallel",
		blackboard.GrantExclusive: "exclusive"}[kind]
	attempts := 3
	if kind == blackboard.GrantReview {
		attempts = 2
	}
	return &blackboard.GrantPlan{MaxConcurrentClaims: limit, LeaseCheck: 30 * time.Second,
		Expect: expect, Agent: agent, Kind: kind, Phase: phase, MaxAttempts: attempts}
}

// planned creates a claim on a new workflow asking bidders to bid, with
// plan made under epoch 1, which is also the stored leader epoch.
func planned(t *testing.T, c *blackboard.Client, bidTimeout time.Duration, plan *blackboard.GrantPlan, bidders ...string) *blackboard.Claim {
	t.Helper()
	if err := redistest.Raw(t).Set(t.Context(), c.Keys().Epoch(), "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	g := startWorkflow(t, c)
	cl := pendingClaim(g, bidders...)
	var reqs []blackboard.InboxMessage
	for _, b := range bidders {
		reqs = append(reqs, blackboard.InboxMessage{Agent: b, Kind: blackboard.MessageBidRequest, ClaimID: cl.ID,
			ArtefactID: g.ID, WorkflowID: g.ID, ArtefactType: g.Type, StructuralType: g.StructuralType,
			ProducedByRole: "user"})
	}
	return createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: cl, ByArtefact: true, BidTimeout: bidTimeout,
		Inbox: reqs, GrantPlan: plan})
}

// answer reads each agent's bid request from its inbox and answers it
// with its bid, in the order of agents; it returns the requests read.
func answer(t *testing.T, c *blackboard.Client, agents []string, bids map[string]blackboard.Bid) map[string]blackboard.InboxEntry {
	t.Helper()
	out := map[string]blackboard.InboxEntry{}
	for _, a := range agents {
		in, err := c.Inbox(t.Context(), a, "cub-"+a)
		if err != nil {
			t.Fatal(err)
		}
		entries, err := in.NextBids(t.Context(), 10, 0)
		if err != nil || len(entries) != 1 {
			t.Fatalf("%s's bid requests = %v, %v; want one", a, entries, err)
		}
		if err := c.AnswerBidRequest(t.Context(), entries[0], bids[a]); err != nil {
			t.Fatalf("bid of %s: %v", a, err)
		}
		out[a] = entries[0]
	}
	return out
}

// grantsOf returns the grant messages in agent's grants stream.
func grantsOf(t *testing.T, c *blackboard.Client, agent string) []blackboard.InboxMessage {
	t.Helper()
	msgs, err := redistest.Raw(t).XRange(t.Context(), c.Keys().AgentGrants(agent), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []blackboard.InboxMessage
	for _, m := range msgs {
		attempt, _ := strconv.Atoi(str(m.Values["attempt"]))
		maxAttempts, _ := strconv.Atoi(str(m.Values["max_attempts"]))
		out = append(out, blackboard.InboxMessage{Agent: agent, Kind: blackboard.MessageKind(str(m.Values["kind"])),
			ClaimID: str(m.Values["claim_id"]), ArtefactID: str(m.Values["artefact_id"]), WorkflowID: str(m.Values["workflow_id"]),
			Grant: blackboard.GrantKind(str(m.Values["grant"])), Token: str(m.Values["token"]),
			Attempt: attempt, MaxAttempts: maxAttempts})
	}
	return out
}

// fallbackOf returns the fallback reason of the claim's bids_complete
// entry in the orchestrator's queue, and whether there is one.
func fallbackOf(t *testing.T, c *blackboard.Client, claimID string) (string, bool) {
	t.Helper()
	msgs, err := redistest.Raw(t).XRange(t.Context(), c.Keys().OrchestratorQueue(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if str(m.Values["event"]) == "bids_complete" && str(m.Values["claim_id"]) == claimID {
			return str(m.Values["fallback"]), true
		}
	}
	return "", false
}

func TestLastBidGrantsInItsScript(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	agents := []string{"writer", "coder", "critic"} // critic, the winner, bids last
	bids := map[string]blackboard.Bid{"writer": blackboard.BidExclusive, "critic": blackboard.BidReview, "coder": blackboard.BidExclusive}
	cl := planned(t, c, time.Hour, planFor(0, "critic", blackboard.GrantReview, bids), agents...)
	reqs := answer(t, c, agents, bids)

	got, err := c.GetClaim(ctx, cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != blackboard.ClaimPendingReview || !slices.Equal(got.GrantedReviewAgents, []string{"critic"}) ||
		got.Attempts != 1 || got.Rev != cl.Rev+1 {
		t.Fatalf("claim after the last bid: status %s, review agents %v, attempts %d, rev %d; want pending_review by critic, attempt 1, rev %d",
			got.Status, got.GrantedReviewAgents, got.Attempts, got.Rev, cl.Rev+1)
	}
	if fb, ok := fallbackOf(t, c, cl.ID); ok {
		t.Errorf("the orchestrator was asked to decide (fallback %q); want the grant made by the bid", fb)
	}
	want := blackboard.InboxMessage{Agent: "critic", Kind: blackboard.MessageGrant, ClaimID: cl.ID, ArtefactID: cl.ArtefactID,
		WorkflowID: cl.WorkflowID, Grant: blackboard.GrantReview, Token: "1", Attempt: 1, MaxAttempts: 2}
	if g := grantsOf(t, c, "critic"); len(g) != 1 || !reflect.DeepEqual(g[0], want) {
		t.Errorf("critic's grants = %+v, want [%+v]", g, want)
	}
	for _, a := range []string{"writer", "coder"} {
		if g := grantsOf(t, c, a); len(g) != 0 {
			t.Errorf("%s got grants %+v in the review phase", a, g)
		}
	}
	st, err := c.GetClaimState(ctx, cl.ID, cl.WorkflowID, nil)
	if err != nil || st.Grants["critic"] != "1" || len(st.Grants) != 1 {
		t.Errorf("grant tokens = %v (%v), want critic → 1", st.Grants, err)
	}
	if score, err := raw.ZScore(ctx, c.Keys().Timers(), cl.ID).Result(); err != nil || int64(score) != got.UpdatedAtMs+30000 {
		t.Errorf("timer at %v (%v), want the lease check at %d", score, err, got.UpdatedAtMs+30000)
	}
	if ok, err := raw.SIsMember(ctx, c.Keys().Running(), cl.ID).Result(); err != nil || !ok {
		t.Errorf("claim holds no scheduler slot (%v)", err)
	}
	if _, err := raw.ZScore(ctx, c.Keys().AgentRunning("critic"), cl.ID).Result(); err != nil {
		t.Errorf("critic holds no agent slot for the grant: %v", err)
	}
	if n := raw.HExists(ctx, c.Keys().Claim(cl.ID), "grant_plan").Val(); n {
		t.Error("the grant plan outlived the grant")
	}
	ev := eventsOf(t, c, blackboard.EventClaimGranted)
	if len(ev) != 1 || ev[0].Field("phase") != "review" || ev[0].Field("agents") != "critic" ||
		ev[0].Field("granted_by") != "last_bid" || ev[0].ArtefactID != cl.ArtefactID {
		t.Errorf("claim_granted events = %+v", ev)
	}
	tr := eventsOf(t, c, blackboard.EventClaimTransitioned)
	if len(tr) != 1 || tr[0].Field("from") != "pending_consensus" || tr[0].Field("to") != "pending_review" {
		t.Errorf("claim_transitioned events = %+v", tr)
	}

	// The same bid again (a replayed request) grants nothing more.
	err = c.AnswerBidRequest(ctx, reqs["critic"], blackboard.BidReview)
	wantErr(t, err, blackboard.ErrStaleStatus)
	if g := grantsOf(t, c, "critic"); len(g) != 1 {
		t.Errorf("critic has %d grants after a replayed bid, want 1", len(g))
	}
	if ev := eventsOf(t, c, blackboard.EventClaimGranted); len(ev) != 1 {
		t.Errorf("%d claim_granted events after a replayed bid, want 1", len(ev))
	}
}

// TestLastBidAppliesOnlyThePlannedGrant: the script holds no phase rule;
// it applies the grant the orchestrator decided in advance, and only when
// the bids are the predicted ones and the last bidder is the planned
// agent (a cub writes only its own agent's keys). Anything else is left
// to the orchestrator.
// The last expected bid is found among bids decided at creation (agents
// the orchestrator did not ask) and names that contain each other: no bid
// before the last completes consensus, the last one does.
func TestLastBidAmongDecidedBidsAndSimilarNames(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	if err := redistest.Raw(t).Set(t.Context(), c.Keys().Epoch(), "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	agents := []string{"coder-2", "coder", "code"} // code, the winner, bids last
	bids := map[string]blackboard.Bid{"coder-2": blackboard.BidExclusive, "coder": blackboard.BidExclusive, "code": blackboard.BidExclusive}
	g := startWorkflow(t, c)
	cl := pendingClaim(g, agents...)
	var reqs []blackboard.InboxMessage
	for _, b := range agents {
		reqs = append(reqs, blackboard.InboxMessage{Agent: b, Kind: blackboard.MessageBidRequest, ClaimID: cl.ID,
			ArtefactID: g.ID, WorkflowID: g.ID, ArtefactType: g.Type, StructuralType: g.StructuralType, ProducedByRole: "user"})
	}
	// Two agents the orchestrator decided for (their rules ignore the
	// type): their bids are stored at creation and count for nothing.
	createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: cl, ByArtefact: true, BidTimeout: time.Hour, Inbox: reqs,
		Bids:      map[string]blackboard.Bid{"linter": blackboard.BidIgnore, "cod": blackboard.BidIgnore},
		GrantPlan: planFor(0, "code", blackboard.GrantExclusive, bids)})
	for i, a := range agents {
		answer(t, c, []string{a}, bids)
		got, err := c.GetClaim(t.Context(), cl.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, queued := fallbackOf(t, c, cl.ID)
		if last := i == len(agents)-1; !last && (got.Status != blackboard.ClaimPendingConsensus || queued) {
			t.Fatalf("after %d of %d bids: claim %s, orchestrator asked %v; want pending_consensus, not asked", i+1, len(agents), got.Status, queued)
		} else if last && (got.Status != blackboard.ClaimPendingExclusive || queued) {
			t.Fatalf("after the last bid: claim %s, orchestrator asked %v; want pending_exclusive granted by the bid", got.Status, queued)
		}
	}
	if g := grantsOf(t, c, "code"); len(g) != 1 {
		t.Errorf("code's grants = %+v, want one", g)
	}
}

func TestLastBidAppliesOnlyThePlannedGrant(t *testing.T) {
	t.Parallel()
	exclusive := map[string]blackboard.Bid{"coder_a": blackboard.BidExclusive, "coder-b": blackboard.BidExclusive, "zed": blackboard.BidExclusive}
	parallel := map[string]blackboard.Bid{"coder_a": blackboard.BidClaim, "coder-b": blackboard.BidExclusive, "zed": blackboard.BidIgnore}
	cases := []struct {
		name string
		plan *blackboard.GrantPlan
		// order is the order the agents answer in; the last completes.
		order  []string
		bids   map[string]blackboard.Bid
		status blackboard.ClaimStatus
		// fallback, when set, is the reason the script leaves the grant.
		fallback string
	}{
		{"the planned agent bids last as predicted", planFor(0, "coder-b", blackboard.GrantExclusive, exclusive),
			[]string{"zed", "coder_a", "coder-b"}, exclusive, blackboard.ClaimPendingExclusive, ""},
		{"the last bidder is not the planned agent", planFor(0, "coder-b", blackboard.GrantExclusive, exclusive),
			[]string{"zed", "coder-b", "coder_a"}, exclusive, "", "other_agent"},
		{"a planned parallel grant", planFor(0, "coder_a", blackboard.GrantClaim, parallel),
			[]string{"coder-b", "zed", "coder_a"}, parallel, blackboard.ClaimPendingParallel, ""},
		{"a bid other than predicted", planFor(0, "coder_a", blackboard.GrantClaim, parallel),
			[]string{"coder-b", "zed", "coder_a"}, map[string]blackboard.Bid{
				"coder_a": blackboard.BidClaim, "coder-b": blackboard.BidExclusive, "zed": blackboard.BidClaim}, "", "unplanned_bids"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			cl := planned(t, c, time.Hour, tc.plan, "zed", "coder_a", "coder-b")
			answer(t, c, tc.order, tc.bids)
			if tc.fallback != "" {
				assertLeftToOrchestrator(t, c, cl, tc.order, tc.fallback)
				return
			}
			got, err := c.GetClaim(t.Context(), cl.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.status || !slices.Equal(got.GrantedAgents(), []string{tc.plan.Agent}) {
				t.Fatalf("claim %s granted to %v, want %s granted to %s", got.Status, got.GrantedAgents(), tc.status, tc.plan.Agent)
			}
			for _, a := range tc.order {
				g := grantsOf(t, c, a)
				if (a == tc.plan.Agent) != (len(g) == 1) || (len(g) == 1 && g[0].Grant != tc.plan.Kind) {
					t.Errorf("%s's grants = %+v", a, g)
				}
			}
		})
	}
}

func TestLastBidLeavesTheGrantToTheOrchestrator(t *testing.T) {
	t.Parallel()
	agents := []string{"a", "b"}
	work := map[string]blackboard.Bid{"a": blackboard.BidExclusive, "b": blackboard.BidClaim}
	plan := func(limit int) *blackboard.GrantPlan { return planFor(limit, "b", blackboard.GrantClaim, work) }
	cases := []struct {
		name       string
		limit      int
		bidTimeout time.Duration
		bids       map[string]blackboard.Bid
		// before runs after the claim is created, before the bids.
		before func(t *testing.T, c *blackboard.Client, cl *blackboard.Claim)
		want   string
	}{
		{"paused", 0, time.Hour, work, func(t *testing.T, c *blackboard.Client, _ *blackboard.Claim) {
			if _, err := c.Pause(t.Context(), "test", "maintenance", "cli"); err != nil {
				t.Fatal(err)
			}
		}, "paused"},
		{"at max_concurrent_claims", 1, time.Hour, work, func(t *testing.T, c *blackboard.Client, _ *blackboard.Claim) {
			redistest.Raw(t).SAdd(t.Context(), c.Keys().Running(), blackboard.NewID())
		}, "capacity"},
		{"others wait for a slot", 5, time.Hour, work, func(t *testing.T, c *blackboard.Client, _ *blackboard.Claim) {
			redistest.Raw(t).ZAdd(t.Context(), c.Keys().Waiting(), redis.Z{Score: -3, Member: "0000000000001:" + blackboard.NewID()})
		}, "capacity"},
		{"newer leader epoch", 0, time.Hour, work, func(t *testing.T, c *blackboard.Client, _ *blackboard.Claim) {
			redistest.Raw(t).Set(t.Context(), c.Keys().Epoch(), "2", 0)
		}, "epoch"},
		{"bid deadline passed", 0, 50 * time.Millisecond, work, func(t *testing.T, c *blackboard.Client, cl *blackboard.Claim) {
			eventually.True(t, waitFor, "the Redis clock to pass the bid deadline", func() bool {
				now, err := c.Now(t.Context())
				return err == nil && now > cl.BidDeadlineMs
			})
		}, "deadline"},
		{"workflow ended", 0, time.Hour, work, func(t *testing.T, c *blackboard.Client, cl *blackboard.Claim) {
			if _, err := c.EndWorkflow(t.Context(), cl.WorkflowID, blackboard.WorkflowCancelled, "test", 1); err != nil {
				t.Fatal(err)
			}
		}, "workflow"},
		{"bids other than predicted", 0, time.Hour, map[string]blackboard.Bid{"a": blackboard.BidIgnore, "b": blackboard.BidIgnore}, nil, "unplanned_bids"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			cl := planned(t, c, tc.bidTimeout, plan(tc.limit), agents...)
			if tc.before != nil {
				tc.before(t, c, cl)
			}
			answer(t, c, agents, tc.bids)
			assertLeftToOrchestrator(t, c, cl, agents, tc.want)
		})
	}
	t.Run("the orchestrator's grant spends the plan", func(t *testing.T) {
		t.Parallel()
		c := redistest.Client(t)
		cl := planned(t, c, time.Hour, plan(0), agents...)
		if _, err := c.Pause(t.Context(), "test", "hold", "cli"); err != nil {
			t.Fatal(err)
		}
		answer(t, c, agents, work)
		if _, err := c.Resume(t.Context(), "test", "cli"); err != nil {
			t.Fatal(err)
		}
		transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: cl.WorkflowID, From: cl.Status,
			Rev: cl.Rev, To: blackboard.ClaimPendingExclusive, Grants: map[string]string{"a": "1"}})
		if redistest.Raw(t).HExists(t.Context(), c.Keys().Claim(cl.ID), "grant_plan").Val() {
			t.Error("the grant plan outlived consensus")
		}
	})
	t.Run("no plan", func(t *testing.T) {
		t.Parallel()
		c := redistest.Client(t)
		g := startWorkflow(t, c)
		cl := pendingClaim(g, agents...)
		var reqs []blackboard.InboxMessage
		for _, a := range agents {
			reqs = append(reqs, blackboard.InboxMessage{Agent: a, Kind: blackboard.MessageBidRequest, ClaimID: cl.ID,
				ArtefactID: g.ID, WorkflowID: g.ID})
		}
		cl = createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: cl, ByArtefact: true, BidTimeout: time.Hour, Inbox: reqs})
		answer(t, c, agents, work)
		assertLeftToOrchestrator(t, c, cl, agents, "no_plan")
	})
}

// assertLeftToOrchestrator checks that the claim is still in consensus,
// nobody got a grant, and the orchestrator's queue holds its bids_complete
// entry naming why.
func assertLeftToOrchestrator(t *testing.T, c *blackboard.Client, cl *blackboard.Claim, agents []string, why string) {
	t.Helper()
	got, err := c.GetClaim(t.Context(), cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != blackboard.ClaimPendingConsensus {
		t.Errorf("claim is %s, want it left in pending_consensus for the orchestrator", got.Status)
	}
	for _, a := range agents {
		if g := grantsOf(t, c, a); len(g) != 0 {
			t.Errorf("%s got grants %+v", a, g)
		}
	}
	if ev := eventsOf(t, c, blackboard.EventClaimGranted); len(ev) != 0 {
		t.Errorf("claim_granted events %+v", ev)
	}
	fb, ok := fallbackOf(t, c, cl.ID)
	if !ok || fb != why {
		t.Errorf("bids_complete entry: present %v, fallback %q; want one with fallback %q", ok, fb, why)
	}
}

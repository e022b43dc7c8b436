package blackboard_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// decidedAtCreation is a claim nobody is asked to bid on: coder's rules
// decide exclusive, critic's ignore, and the plan grants coder.
func decidedAtCreation(t *testing.T, c *blackboard.Client, limit int) blackboard.NewClaim {
	t.Helper()
	if err := redistest.Raw(t).Set(t.Context(), c.Keys().Epoch(), "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	g := startWorkflow(t, c)
	return blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true, BidTimeout: time.Hour,
		Bids:      map[string]blackboard.Bid{"coder": blackboard.BidExclusive, "critic": blackboard.BidIgnore},
		GrantPlan: planFor(limit, "coder", blackboard.GrantExclusive, map[string]blackboard.Bid{"coder": blackboard.BidExclusive}),
		GrantNow:  true}
}

func TestCreateClaimAppliesTheDecidedGrant(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	nc := decidedAtCreation(t, c, 0)
	cl := nc.Claim

	r, err := c.CreateClaim(ctx, nc)
	if err != nil || !r.Created || !r.Granted || r.Held != "" || r.ID != cl.ID {
		t.Fatalf("CreateClaim = %+v, %v; want the claim created and granted", r, err)
	}
	got, err := c.GetClaim(ctx, cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != blackboard.ClaimPendingExclusive || got.GrantedExclusiveAgent != "coder" || got.Attempts != 1 || got.Rev != 1 {
		t.Fatalf("claim: status %s, exclusive agent %q, attempts %d, rev %d; want pending_exclusive by coder, attempt 1, rev 1",
			got.Status, got.GrantedExclusiveAgent, got.Attempts, got.Rev)
	}
	want := blackboard.InboxMessage{Agent: "coder", Kind: blackboard.MessageGrant, ClaimID: cl.ID, ArtefactID: cl.ArtefactID,
		WorkflowID: cl.WorkflowID, Grant: blackboard.GrantExclusive, Token: "1", Attempt: 1, MaxAttempts: 3}
	if g := grantsOf(t, c, "coder"); len(g) != 1 || !reflect.DeepEqual(g[0], want) {
		t.Errorf("coder's grants = %+v, want [%+v]", g, want)
	}
	st, err := c.GetClaimState(ctx, cl.ID, cl.WorkflowID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Grants, map[string]string{"coder": "1"}) {
		t.Errorf("grant tokens = %v, want coder → 1", st.Grants)
	}
	if !reflect.DeepEqual(st.Bids, nc.Bids) {
		t.Errorf("bids = %v, want the decided %v", st.Bids, nc.Bids)
	}
	if score, err := raw.ZScore(ctx, c.Keys().Timers(), cl.ID).Result(); err != nil || int64(score) != got.UpdatedAtMs+30000 {
		t.Errorf("timer at %v (%v), want the lease check at %d", score, err, got.UpdatedAtMs+30000)
	}
	if ok, err := raw.SIsMember(ctx, c.Keys().Running(), cl.ID).Result(); err != nil || !ok {
		t.Errorf("claim holds no scheduler slot (%v)", err)
	}
	if _, err := raw.ZScore(ctx, c.Keys().AgentRunning("coder"), cl.ID).Result(); err != nil {
		t.Errorf("coder holds no agent slot for the grant: %v", err)
	}
	if raw.HExists(ctx, c.Keys().Claim(cl.ID), "grant_plan").Val() {
		t.Error("the grant plan outlived the grant")
	}
	ev := eventsOf(t, c, blackboard.EventClaimGranted)
	if len(ev) != 1 || ev[0].Field("phase") != "exclusive" || ev[0].Field("agents") != "coder" ||
		ev[0].Field("granted_by") != "rules" || ev[0].ArtefactID != cl.ArtefactID {
		t.Errorf("claim_granted events = %+v", ev)
	}
	tr := eventsOf(t, c, blackboard.EventClaimTransitioned)
	if len(tr) != 1 || tr[0].Field("from") != "pending_consensus" || tr[0].Field("to") != "pending_exclusive" {
		t.Errorf("claim_transitioned events = %+v", tr)
	}
	if n := len(eventsOf(t, c, blackboard.EventClaimCreated)); n != 1 {
		t.Errorf("%d claim_created events, want 1", n)
	}

	// A repeat (the orchestrator crashed before acknowledging the
	// artefact's event) writes nothing and grants nothing more.
	again, err := c.CreateClaim(ctx, nc)
	if err != nil || again.Created || again.Granted || again.ID != cl.ID {
		t.Fatalf("repeat CreateClaim = %+v, %v; want the existing claim, nothing written", again, err)
	}
	if g := grantsOf(t, c, "coder"); len(g) != 1 {
		t.Errorf("coder has %d grants after a repeat, want 1", len(g))
	}
	if n := len(eventsOf(t, c, blackboard.EventClaimGranted)); n != 1 {
		t.Errorf("%d claim_granted events after a repeat, want 1", n)
	}
}

// TestCreateClaimHoldsTheDecidedGrantForTheScheduler: what needs the
// orchestrator's scheduler keeps the claim in pending_consensus with its
// bids, for the orchestrator to decide as without a plan.
func TestCreateClaimHoldsTheDecidedGrantForTheScheduler(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		limit  int
		before func(t *testing.T, c *blackboard.Client)
		want   string
	}{
		{"paused", 0, func(t *testing.T, c *blackboard.Client) {
			if _, err := c.Pause(t.Context(), "test", "maintenance", "cli"); err != nil {
				t.Fatal(err)
			}
		}, "paused"},
		{"at max_concurrent_claims", 1, func(t *testing.T, c *blackboard.Client) {
			redistest.Raw(t).SAdd(t.Context(), c.Keys().Running(), blackboard.NewID())
		}, "capacity"},
		{"others wait for a slot", 5, func(t *testing.T, c *blackboard.Client) {
			redistest.Raw(t).ZAdd(t.Context(), c.Keys().Waiting(), redis.Z{Score: -3, Member: "0000000000001:" + blackboard.NewID()})
		}, "capacity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			nc := decidedAtCreation(t, c, tc.limit)
			tc.before(t, c)
			r, err := c.CreateClaim(t.Context(), nc)
			if err != nil || !r.Created || r.Granted || r.Held != tc.want {
				t.Fatalf("CreateClaim = %+v, %v; want created, held for %q", r, err, tc.want)
			}
			st, err := c.GetClaimState(t.Context(), nc.Claim.ID, nc.Claim.WorkflowID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if st.Claim.Status != blackboard.ClaimPendingConsensus || len(st.Grants) != 0 || !reflect.DeepEqual(st.Bids, nc.Bids) {
				t.Errorf("claim %s, grants %v, bids %v; want pending_consensus, no grant, the decided bids",
					st.Claim.Status, st.Grants, st.Bids)
			}
			if g := grantsOf(t, c, "coder"); len(g) != 0 {
				t.Errorf("coder got grants %+v", g)
			}
			if redistest.Raw(t).HExists(t.Context(), c.Keys().Claim(nc.Claim.ID), "grant_plan").Val() {
				t.Error("a plan for the grant at creation was stored with the claim; nothing would ever spend it")
			}
			if n := len(eventsOf(t, c, blackboard.EventClaimGranted)); n != 0 {
				t.Errorf("%d claim_granted events, want none", n)
			}
		})
	}
	// The agent's own capacity is not the scheduler's: the claim is
	// granted and its grant waits for one of the agent's slots, as any
	// grant does.
	t.Run("the agent at its capacity", func(t *testing.T) {
		t.Parallel()
		c := redistest.Client(t)
		raw := redistest.Raw(t)
		nc := decidedAtCreation(t, c, 0)
		raw.HSet(t.Context(), c.Keys().Capacity(), "coder", "1")
		raw.ZAdd(t.Context(), c.Keys().AgentRunning("coder"), redis.Z{Score: 1, Member: blackboard.NewID()})
		r, err := c.CreateClaim(t.Context(), nc)
		if err != nil || !r.Granted {
			t.Fatalf("CreateClaim = %+v, %v; want granted", r, err)
		}
		if g := grantsOf(t, c, "coder"); len(g) != 0 {
			t.Errorf("coder's grants = %+v; want the grant waiting for its slot", g)
		}
		if n := raw.ZCard(t.Context(), c.Keys().AgentWaiting("coder")).Val(); n != 1 {
			t.Errorf("%d grants wait for coder's slot, want 1", n)
		}
	})
}

func TestCreateClaimRefusesAGrantAtCreationItCannotApply(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	for name, change := range map[string]func(nc *blackboard.NewClaim){
		"no plan":        func(nc *blackboard.NewClaim) { nc.GrantPlan = nil },
		"bidders to ask": func(nc *blackboard.NewClaim) { nc.Claim.ExpectedBidders = []string{"critic"} },
		"a bid request": func(nc *blackboard.NewClaim) {
			nc.Inbox = []blackboard.InboxMessage{{Agent: "critic", Kind: blackboard.MessageBidRequest}}
		},
		"not in consensus":   func(nc *blackboard.NewClaim) { nc.Claim.Status = blackboard.ClaimPendingApproval },
		"a claim already on": func(nc *blackboard.NewClaim) { nc.Claim.Rev = 3 },
	} {
		nc := decidedAtCreation(t, c, 0)
		change(&nc)
		r, err := c.CreateClaim(t.Context(), nc)
		if r.Created {
			t.Errorf("%s: created %+v", name, r)
		}
		wantErr(t, err, blackboard.ErrInvalid)
	}
}

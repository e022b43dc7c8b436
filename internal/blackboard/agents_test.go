package blackboard_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// grantedClaim starts a workflow with one claim granted to coder under
// token "1".
func grantedClaim(tb testing.TB, c *blackboard.Client) (*blackboard.Artefact, *blackboard.Claim) {
	tb.Helper()
	g := startWorkflow(tb, c)
	cl := pendingClaim(g, "coder")
	cl.Status, cl.GrantedExclusiveAgent = blackboard.ClaimPendingExclusive, "coder"
	return g, createClaim(tb, c, blackboard.NewClaim{Epoch: 1, Claim: cl, ByArtefact: true, Grants: map[string]string{"coder": "1"}})
}

func TestTakeLease(t *testing.T) {
	t.Parallel()
	redistest.Shared(t) // each case makes its own client; skip the whole table in -short mode
	cases := []struct {
		name  string
		token string
		// before changes the claim after it was granted to coder under "1".
		before func(t *testing.T, c *blackboard.Client, g *blackboard.Artefact, cl *blackboard.Claim)
		want   error
	}{
		{"current grant", "1", nil, nil},
		{"stale token", "0", nil, blackboard.ErrStaleGrant},
		{"re-granted", "1", func(t *testing.T, c *blackboard.Client, g *blackboard.Artefact, cl *blackboard.Claim) {
			transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: g.ID, From: cl.Status, Rev: -1,
				To: cl.Status, Grants: map[string]string{"coder": "2"}})
		}, blackboard.ErrStaleGrant},
		{"output exists (a replay)", "1", func(t *testing.T, c *blackboard.Client, g *blackboard.Artefact, cl *blackboard.Claim) {
			a := child(g.ID)
			a.ClaimID, a.ProducedByAgent = cl.ID, "coder"
			create(t, c, a, blackboard.WriteAuth{GrantToken: "1"})
		}, blackboard.ErrExists},
		{"claim ended", "1", func(t *testing.T, c *blackboard.Client, g *blackboard.Artefact, cl *blackboard.Claim) {
			transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: g.ID, From: cl.Status, Rev: -1,
				To: blackboard.ClaimTerminated, Set: blackboard.ClaimPatch{TerminationReason: "cancelled"}})
		}, blackboard.ErrStaleStatus},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			raw := redistest.Raw(t)
			g, cl := grantedClaim(t, c)
			if tc.before != nil {
				tc.before(t, c, g, cl)
			}
			before := snapshot(t, raw, c)
			err := c.TakeLease(t.Context(), blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "coder", Token: tc.token, Holder: "cub-1", TTL: time.Minute})
			if tc.want != nil {
				wantErr(t, err, tc.want)
				assertUnchanged(t, raw, c, before)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			key := c.Keys().Lease(cl.ID, "coder")
			if v, err := raw.Get(t.Context(), key).Result(); err != nil || v != tc.token+"|cub-1" {
				t.Errorf("lease value = %q, %v; want the token %q and the holder", v, err, tc.token)
			}
			if ttl, err := raw.PTTL(t.Context(), key).Result(); err != nil || ttl <= 0 || ttl > time.Minute {
				t.Errorf("lease TTL = %v, %v; want (0, 1m]", ttl, err)
			}
			st, err := c.GetClaimState(t.Context(), cl.ID, g.ID, []string{"coder", "tester"})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(st.LiveLeases, map[string]bool{"coder": true, "tester": false}) {
				t.Errorf("live leases = %v", st.LiveLeases)
			}
			if left, ok := st.LeaseLeft["coder"]; !ok || left <= 0 || left > time.Minute || len(st.LeaseLeft) != 1 {
				t.Errorf("lease left = %v; want the coder's, in (0, 1m], and no other", st.LeaseLeft)
			}
		})
	}
	t.Run("unknown claim", func(t *testing.T) {
		t.Parallel()
		c := redistest.Client(t)
		err := c.TakeLease(t.Context(), blackboard.TakeLeaseParams{ClaimID: blackboard.NewID(), Agent: "coder", Token: "1", Holder: "cub-1", TTL: time.Minute})
		wantErr(t, err, blackboard.ErrNotFound)
	})
	t.Run("one owner per grant", func(t *testing.T) {
		t.Parallel()
		c := redistest.Client(t)
		raw := redistest.Raw(t)
		ctx := t.Context()
		g, cl := grantedClaim(t, c)
		if err := c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "coder", Token: "1", Holder: "cub-a", TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
		// A second replica that got hold of the same grant cannot take
		// the lease while the first one's lives...
		err := c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "coder", Token: "1", Holder: "cub-b", TTL: time.Minute})
		wantErr(t, err, blackboard.ErrLeaseHeld)
		// ...the holder itself may (a restart under the same name)...
		if err := c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "coder", Token: "1", Holder: "cub-a", TTL: time.Minute}); err != nil {
			t.Errorf("the holder retaking its lease: %v", err)
		}
		// ...and a re-issued grant takes over from the older token.
		transition(t, c, blackboard.Transition{Epoch: 1, ClaimID: cl.ID, WorkflowID: g.ID, From: cl.Status, Rev: -1,
			To: cl.Status, Grants: map[string]string{"coder": "2"}})
		if err := c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "coder", Token: "2", Holder: "cub-b", TTL: time.Minute}); err != nil {
			t.Fatalf("the new grant's lease: %v", err)
		}
		if v, _ := raw.Get(ctx, c.Keys().Lease(cl.ID, "coder")).Result(); v != "2|cub-b" {
			t.Errorf("lease value %q, want 2|cub-b", v)
		}
		lost, err := c.Heartbeat(ctx, blackboard.HeartbeatParams{Agent: "coder", Consumer: "cub-a", TTL: time.Minute, Leases: []blackboard.Lease{{ClaimID: cl.ID, Token: "1"}}, LeaseTTL: time.Minute})
		if err != nil || len(lost) != 1 {
			t.Errorf("the old holder's beat: lost %v, %v; want its lease lost", lost, err)
		}
	})
}

// TestHeartbeatExtendsLeases renews held leases and reports lost ones; a
// deleted lease key stands in for one that expired.
func TestHeartbeatExtendsLeases(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	_, held := grantedClaim(t, c)
	_, expired := grantedClaim(t, c)
	_, regranted := grantedClaim(t, c)
	for _, cl := range []*blackboard.Claim{held, expired, regranted} {
		if err := c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "coder", Token: "1", Holder: "cub-7", TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
	}
	if err := raw.Del(ctx, c.Keys().Lease(expired.ID, "coder")).Err(); err != nil {
		t.Fatal(err)
	}
	// Another attempt holds this lease now: the old token must not renew it.
	if err := raw.Set(ctx, c.Keys().Lease(regranted.ID, "coder"), "2|cub-7", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}

	leases := []blackboard.Lease{{ClaimID: held.ID, Token: "1"}, {ClaimID: expired.ID, Token: "1"}, {ClaimID: regranted.ID, Token: "1"}}
	lost, err := c.Heartbeat(ctx, blackboard.HeartbeatParams{Agent: "coder", Consumer: "cub-7", TTL: 30 * time.Second, Leases: leases, LeaseTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if want := leases[1:]; !reflect.DeepEqual(lost, want) {
		t.Errorf("lost = %v, want %v", lost, want)
	}
	// Extended from one minute to one hour.
	if ttl, err := raw.PTTL(ctx, c.Keys().Lease(held.ID, "coder")).Result(); err != nil || ttl <= time.Minute {
		t.Errorf("held lease TTL = %v, %v; want it extended past 1m", ttl, err)
	}
	if ttl, err := raw.PTTL(ctx, c.Keys().Lease(regranted.ID, "coder")).Result(); err != nil || ttl > time.Minute {
		t.Errorf("re-granted lease TTL = %v, %v; want it untouched (<= 1m)", ttl, err)
	}
	if exists, _ := raw.Exists(ctx, c.Keys().Lease(expired.ID, "coder")).Result(); exists != 0 {
		t.Error("heartbeat recreated an expired lease")
	}
	// The heartbeat key names the consumer and lives for ttl.
	if v, err := raw.Get(ctx, c.Keys().Heartbeat("coder")).Result(); err != nil || v != "cub-7" {
		t.Errorf("heartbeat = %q, %v; want cub-7", v, err)
	}
	live, err := c.AgentLiveness(ctx, []string{"coder", "tester"})
	if err != nil {
		t.Fatal(err)
	}
	if ttl, ok := live["coder"]; !ok || ttl <= 0 || ttl > 30*time.Second || len(live) != 1 {
		t.Errorf("liveness = %v, want only coder with a TTL in (0, 30s]", live)
	}
	if err := c.Deregister(ctx, "coder"); err != nil {
		t.Fatal(err)
	}
	if live, err := c.AgentLiveness(ctx, []string{"coder"}); err != nil || len(live) != 0 {
		t.Errorf("liveness after Deregister = %v, %v; want none", live, err)
	}
	// No leases: just the heartbeat.
	if lost, err := c.Heartbeat(ctx, blackboard.HeartbeatParams{Agent: "coder", Consumer: "cub-7", TTL: time.Minute, Leases: nil, LeaseTTL: time.Minute}); err != nil || lost != nil {
		t.Errorf("Heartbeat without leases = %v, %v", lost, err)
	}
}

func TestReleaseLease(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	_, cl := grantedClaim(t, c)
	if err := c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "coder", Token: "1", Holder: "cub-1", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	key := c.Keys().Lease(cl.ID, "coder")
	// A release under another token, or by another replica, leaves the
	// lease alone.
	for _, other := range [][2]string{{"2", "cub-1"}, {"1", "cub-2"}} {
		if err := c.ReleaseLease(ctx, cl.ID, "coder", other[0], other[1]); err != nil {
			t.Fatal(err)
		}
		if n, _ := raw.Exists(ctx, key).Result(); n != 1 {
			t.Fatalf("a release with token %s by %s dropped the lease", other[0], other[1])
		}
	}
	if err := c.ReleaseLease(ctx, cl.ID, "coder", "1", "cub-1"); err != nil {
		t.Fatal(err)
	}
	if n, _ := raw.Exists(ctx, key).Result(); n != 0 {
		t.Error("the lease survived its release")
	}
	// Releasing again is harmless.
	if err := c.ReleaseLease(ctx, cl.ID, "coder", "1", "cub-1"); err != nil {
		t.Error(err)
	}
}

func TestRegisterAgent(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	r := blackboard.Registration{Name: "coder", Role: "coder", Consumes: []string{"Plan"}, Consumer: "cub-1", StartedAtMs: 1}
	if err := c.RegisterAgent(ctx, r, time.Minute); err != nil {
		t.Fatal(err)
	}
	agents, err := c.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(agents, map[string]blackboard.Registration{"coder": r}) {
		t.Errorf("agents = %+v", agents)
	}
	ev := eventsOf(t, c, blackboard.EventAgentRegistered)
	if len(ev) != 1 || ev[0].Agent != "coder" || ev[0].Field("consumer") != "cub-1" {
		t.Errorf("agent_registered events = %+v", ev)
	}
	if live, err := c.AgentLiveness(ctx, []string{"coder"}); err != nil || live["coder"] <= 0 {
		t.Errorf("liveness = %v, %v", live, err)
	}
	err = c.RegisterAgent(ctx, blackboard.Registration{Name: "Bad Name"}, time.Minute)
	wantErr(t, err, blackboard.ErrInvalid)
}

// TestLeaseTTLsMustBePositive refuses TTLs that the scripts would read as
// "release": a heartbeat must never drop the leases it was asked to keep.
func TestLeaseTTLsMustBePositive(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	_, cl := grantedClaim(t, c)
	if err := c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "coder", Token: "1", Holder: "cub", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	leases := []blackboard.Lease{{ClaimID: cl.ID, Token: "1"}}
	cases := []struct {
		name string
		call func() error
	}{
		{"heartbeat lease ttl 0", func() error {
			_, err := c.Heartbeat(ctx, blackboard.HeartbeatParams{Agent: "coder", Consumer: "cub", TTL: time.Minute, Leases: leases, LeaseTTL: 0})
			return err
		}},
		{"heartbeat lease ttl under 1ms", func() error {
			_, err := c.Heartbeat(ctx, blackboard.HeartbeatParams{Agent: "coder", Consumer: "cub", TTL: time.Minute, Leases: leases, LeaseTTL: 500 * time.Microsecond})
			return err
		}},
		{"heartbeat ttl 0", func() error {
			_, err := c.Heartbeat(ctx, blackboard.HeartbeatParams{Agent: "coder", Consumer: "cub", TTL: 0, Leases: nil, LeaseTTL: time.Minute})
			return err
		}},
		{"take lease ttl 0", func() error {
			return c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "coder", Token: "1", Holder: "cub", TTL: 0})
		}},
	}
	for _, tc := range cases {
		before := snapshot(t, raw, c)
		if err := tc.call(); !errors.Is(err, blackboard.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", tc.name, err)
		}
		assertUnchanged(t, raw, c, before)
	}
	if n, _ := raw.Exists(ctx, c.Keys().Lease(cl.ID, "coder")).Result(); n != 1 {
		t.Error("the lease is gone")
	}
}

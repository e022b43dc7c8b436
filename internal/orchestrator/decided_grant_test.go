package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
)

// TestRuleDecidedGrantNeverTakenFailsNamingTheAgent: with the default
// decide_rule_bids, a live agent whose rules bid exclusive is granted at
// claim creation without being asked. Nobody takes the grant (a wedged
// cub that still heartbeats): the lease check grants it again, then
// terminates the claim and fails the workflow naming the agent, within
// max_grant_attempts lease checks — never "completed", never waiting
// forever.
func TestRuleDecidedGrantNeverTakenFailsNamingTheAgent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, Config{Advancer: AdvancerConfig{MaxGrantAttempts: 2},
		Agents: map[string]string{"wedged": "coder"},
		Claims: ClaimConfig{BidTimeout: time.Hour, LeaseTTL: 20 * time.Millisecond,
			Rules: map[string]bidding.Rules{"wedged": {Role: "coder", Strategy: blackboard.BidExclusive}}}})
	wf, claimID := f.goal()
	cl := f.claim(claimID)
	if cl.Status != blackboard.ClaimPendingExclusive || cl.GrantedExclusiveAgent != "wedged" || len(cl.ExpectedBidders) != 0 {
		t.Fatalf("claim at creation: %s to %q, expected bidders %v; want pending_exclusive to wedged, nobody asked",
			cl.Status, cl.GrantedExclusiveAgent, cl.ExpectedBidders)
	}
	in, err := f.bb.Inbox(ctx, "wedged", "cub-wedged")
	if err != nil {
		t.Fatal(err)
	}
	if reqs, err := in.NextBids(ctx, 10, 0); err != nil || len(reqs) != 0 {
		t.Fatalf("bid requests to wedged = %v, %v; want none (its bid was decided)", reqs, err)
	}
	if bids, err := f.bb.GetBids(ctx, claimID); err != nil || bids["wedged"] != blackboard.BidExclusive {
		t.Fatalf("bids %v (%v), want wedged=exclusive recorded at creation", bids, err)
	}
	// The lease checks, as the claim's timer runs them, until the claim
	// ends; every check either waits for the lease TTL or acts.
	deadline := time.Now().Add(10 * time.Second)
	for !cl.Status.Final() {
		if time.Now().After(deadline) {
			t.Fatalf("claim still %s (attempt %d) after 10s of lease checks", cl.Status, cl.Attempts)
		}
		f.advance(claimID)
		cl = f.claim(claimID)
	}
	if cl.Status != blackboard.ClaimTerminated || cl.Attempts != 2 ||
		!strings.Contains(cl.TerminationReason, "no result from wedged after 2 grant attempts") {
		t.Fatalf("claim %s after %d attempts (%q), want terminated naming wedged after 2", cl.Status, cl.Attempts, cl.TerminationReason)
	}
	w, err := f.bb.GetWorkflow(ctx, wf)
	if err != nil || w.Status != blackboard.WorkflowFailed || !strings.Contains(w.Outcome, "wedged") {
		t.Fatalf("workflow %+v (%v), want failed naming wedged", w, err)
	}
}

// TestDecidedGrantIsWrittenWithTheClaim: when the agents' rules decide
// every bid, the claim is granted by the script that creates it
// (granted_by=rules), the consensus the orchestrator would reach on its
// next read; with the bid grants off (--disable-bid-grants) the
// orchestrator reads the claim and grants it itself. Either way the grant
// is the same: the exclusive agent, attempt 1, one grant message.
func TestDecidedGrantIsWrittenWithTheClaim(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		off       bool
		grantedBy string
	}{
		{"by the creating script", false, "rules"},
		{"by the orchestrator with bid grants off", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, Config{Creator: CreatorConfig{NoBidGrants: tc.off},
				Agents: map[string]string{"coder": "coder", "critic": "critic"},
				Claims: ClaimConfig{BidTimeout: time.Hour, LeaseTTL: time.Minute, Rules: map[string]bidding.Rules{
					"coder":  {Role: "coder", Strategy: blackboard.BidExclusive},
					"critic": {Role: "critic", Strategy: blackboard.BidIgnore}}}})
			_, claimID := f.goal()
			cl := f.claim(claimID)
			if cl.Status != blackboard.ClaimPendingExclusive || cl.GrantedExclusiveAgent != "coder" || cl.Attempts != 1 {
				t.Fatalf("claim %s to %q, attempt %d; want pending_exclusive to coder, attempt 1", cl.Status, cl.GrantedExclusiveAgent, cl.Attempts)
			}
			evs, err := f.bb.ReadEvents(ctx, "0", 1000, 0)
			if err != nil {
				t.Fatal(err)
			}
			var granted []blackboard.Event
			for _, e := range evs {
				if e.Type == blackboard.EventClaimGranted && e.ClaimID == claimID {
					granted = append(granted, e)
				}
			}
			if len(granted) != 1 || granted[0].Field("agents") != "coder" || granted[0].Field("granted_by") != tc.grantedBy {
				t.Fatalf("claim_granted events %+v; want one to coder, granted_by %q", granted, tc.grantedBy)
			}
			in, err := f.bb.Inbox(ctx, "coder", "cub-coder")
			if err != nil {
				t.Fatal(err)
			}
			grants, err := in.NextGrants(ctx, 10, 0)
			if err != nil || len(grants) != 1 || grants[0].ClaimID != claimID {
				t.Fatalf("coder's grants %+v (%v), want the one grant of %s", grants, err, claimID)
			}
		})
	}
}

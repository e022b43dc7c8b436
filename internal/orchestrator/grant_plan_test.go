package orchestrator

import (
	"context"
	"testing"
	"time"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/retrypolicy"
)

// bidAsCub answers agent's bid request on the claim through its inbox,
// as its cub does, without advancing the claim.
func (f *fixture) bidAsCub(agent string, b blackboard.Bid) {
	f.t.Helper()
	ctx := context.Background()
	in, err := f.bb.Inbox(ctx, agent, "cub-"+agent)
	if err != nil {
		f.t.Fatal(err)
	}
	reqs, err := in.NextBids(ctx, 10, 0)
	if err != nil || len(reqs) != 1 {
		f.t.Fatalf("%s's bid requests = %v, %v", agent, reqs, err)
	}
	if err := f.bb.AnswerBidRequest(ctx, reqs[0], b); err != nil {
		f.t.Fatal(err)
	}
}

// TestClaimsCarryAGrantPlan: under a stored leader epoch, the claim the
// creator makes lets its sole bidder's bid grant it, with the agent's
// retry policy in the grant; --disable-bid-grants leaves it to the
// orchestrator. The coder is asked (decide_rule_bids: false): with its
// bid decided at creation nobody bids, and the orchestrator grants.
func TestClaimsCarryAGrantPlan(t *testing.T) {
	t.Parallel()
	for _, off := range []bool{false, true} {
		name := "in the bid"
		if off {
			name = "--disable-bid-grants"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, Config{Creator: CreatorConfig{NoBidGrants: off},
				Agents: map[string]string{"coder": "coder"},
				Claims: ClaimConfig{BidTimeout: time.Hour, LeaseTTL: 10 * time.Second, AskRuleBids: true,
					// The coder's configured rules: the orchestrator predicts
					// its bid from them to plan the grant in the bid.
					Rules: map[string]bidding.Rules{"coder": {Role: "coder", Strategy: blackboard.BidExclusive}},
					Retry: map[string]retrypolicy.Policy{"coder": {MaxAttempts: 4}}}})
			if err := redistest.Raw(t).Set(context.Background(), f.bb.Keys().Epoch(), "1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			_, claimID := f.goal()
			f.bidAsCub("coder", blackboard.BidExclusive)
			cl := f.claim(claimID)
			if off {
				if cl.Status != blackboard.ClaimPendingConsensus {
					t.Fatalf("status %s with --disable-bid-grants before the orchestrator acted, want pending_consensus", cl.Status)
				}
				f.advance(claimID)
				cl = f.claim(claimID)
			}
			if cl.Status != blackboard.ClaimPendingExclusive || cl.GrantedExclusiveAgent != "coder" {
				t.Fatalf("claim %s granted to %q, want pending_exclusive to coder", cl.Status, cl.GrantedExclusiveAgent)
			}
			in, err := f.bb.Inbox(context.Background(), "coder", "cub-coder")
			if err != nil {
				t.Fatal(err)
			}
			grants, err := in.NextGrants(context.Background(), 10, 0)
			if err != nil || len(grants) != 1 || grants[0].Token != "1" || grants[0].Attempt != 1 || grants[0].MaxAttempts != 4 {
				t.Fatalf("coder's grants = %+v, %v; want one, token 1, attempt 1 of 4", grants, err)
			}
		})
	}
}

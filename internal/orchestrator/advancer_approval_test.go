package orchestrator

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
)

// TestApprovedClaimDecidesRuleBids: an approved claim starts consensus as
// a claim created then would. With decide_rule_bids (the default) the
// coder's exclusive bid, which its rules decide, is recorded with the
// approval's step instead of asked (no bid request, a bids_decided event
// naming it), and the claim is granted to it at once; with
// decide_rule_bids: false the coder is asked and granted on its answer.
// Either way the tester, whose rules exclude goals, gets 'ignore'
// recorded without a request.
func TestApprovedClaimDecidesRuleBids(t *testing.T) {
	t.Parallel()
	for _, ask := range []bool{false, true} {
		name := "decide_rule_bids"
		if ask {
			name = "decide_rule_bids: false"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, Config{Agents: map[string]string{"coder": "coder", "tester": "tester"},
				Claims: ClaimConfig{BidTimeout: time.Hour, LeaseTTL: 10 * time.Second, AskRuleBids: ask,
					Approvals: config.ApprovalsConfig{ArtefactTypes: []string{blackboard.GoalType}},
					Rules: map[string]bidding.Rules{
						"coder":  {Role: "coder", Strategy: blackboard.BidExclusive},
						"tester": {Role: "tester", Strategy: blackboard.BidClaim, Consumes: []string{"CodeChange"}},
					}}})
			wf, claimID := f.goal()
			if cl := f.claim(claimID); cl.Status != blackboard.ClaimPendingApproval {
				t.Fatalf("claim %s, want pending_approval", cl.Status)
			}
			if err := f.bb.DecideApproval(ctx, blackboard.Decision{ArtefactID: wf, Decision: blackboard.ApprovalApproved,
				By: "alice", Channel: blackboard.ChannelCLI}); err != nil {
				t.Fatal(err)
			}
			f.advance(claimID)

			coder, err := f.bb.Inbox(ctx, "coder", "cub-coder")
			if err != nil {
				t.Fatal(err)
			}
			reqs, err := coder.NextBids(ctx, 10, 0)
			if err != nil {
				t.Fatal(err)
			}
			tester, err := f.bb.Inbox(ctx, "tester", "cub-tester")
			if err != nil {
				t.Fatal(err)
			}
			if treqs, err := tester.NextBids(ctx, 10, 0); err != nil || len(treqs) != 0 {
				t.Fatalf("bid requests to tester = %v, %v; want none (its rules exclude goals)", treqs, err)
			}
			bids, err := f.bb.GetBids(ctx, claimID)
			if err != nil {
				t.Fatal(err)
			}
			decided := decidedBids(t, f, claimID)
			cl := f.claim(claimID)
			if ask {
				if cl.Status != blackboard.ClaimPendingConsensus || !reflect.DeepEqual(cl.ExpectedBidders, []string{"coder"}) {
					t.Fatalf("approved claim %s expecting %v, want pending_consensus expecting coder", cl.Status, cl.ExpectedBidders)
				}
				if len(reqs) != 1 || reqs[0].ClaimID != claimID {
					t.Fatalf("bid requests to coder = %+v, want one for the claim", reqs)
				}
				if want := map[string]blackboard.Bid{"tester": blackboard.BidIgnore}; !reflect.DeepEqual(bids, want) {
					t.Fatalf("bids %v before the coder answered, want %v", bids, want)
				}
				if len(decided) != 1 || decided[0].Field("ignore") != "tester" || decided[0].Field("bids") != "" {
					t.Fatalf("bids_decided events %+v, want one recording tester's ignore alone", decided)
				}
				if err := f.bb.AnswerBidRequest(ctx, reqs[0], blackboard.BidExclusive); err != nil {
					t.Fatal(err)
				}
				f.advance(claimID)
				cl = f.claim(claimID)
			} else {
				if len(reqs) != 0 || len(cl.ExpectedBidders) != 0 {
					t.Fatalf("bid requests to coder = %+v, expected bidders %v; want nobody asked (its bid is decided)", reqs, cl.ExpectedBidders)
				}
				if want := map[string]blackboard.Bid{"coder": blackboard.BidExclusive, "tester": blackboard.BidIgnore}; !reflect.DeepEqual(bids, want) {
					t.Fatalf("bids %v, want %v recorded with the approval", bids, want)
				}
				if len(decided) != 1 || decided[0].Field("ignore") != "tester" || decided[0].Field("bids") != "coder=exclusive" {
					t.Fatalf("bids_decided events %+v, want one naming tester's ignore and coder=exclusive", decided)
				}
			}
			if cl.Status != blackboard.ClaimPendingExclusive || cl.GrantedExclusiveAgent != "coder" {
				t.Fatalf("claim %s granted to %q, want pending_exclusive to coder", cl.Status, cl.GrantedExclusiveAgent)
			}
			if grants, err := coder.NextGrants(ctx, 10, 0); err != nil || len(grants) != 1 || grants[0].ClaimID != claimID {
				t.Fatalf("coder's grants = %+v, %v; want the claim's", grants, err)
			}
		})
	}
}

// decidedBids returns the claim's bids_decided events.
func decidedBids(t *testing.T, f *fixture, claimID string) []blackboard.Event {
	t.Helper()
	evs, err := f.bb.RangeEvents(context.Background(), "-", "+", 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []blackboard.Event
	for _, e := range evs {
		if e.Type == blackboard.EventBidsDecided && e.ClaimID == claimID {
			out = append(out, e)
		}
	}
	return out
}

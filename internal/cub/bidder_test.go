package cub

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/tool"
)

func TestParseBid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, out string
		want      blackboard.Bid
		ok        bool
	}{
		{"bare word", "exclusive\n", blackboard.BidExclusive, true},
		{"upper case", "  REVIEW ", blackboard.BidReview, true},
		{"json", `{"bid":"claim"}`, blackboard.BidClaim, true},
		{"json ignore", `{"bid": "ignore"}`, blackboard.BidIgnore, true},
		{"unknown word", "maybe", "", false},
		{"empty", "", "", false},
		{"bad json", `{"bid":`, "", false},
		{"json without bid", `{"x":1}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseBid([]byte(tc.out))
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("ParseBid(%q) = %q, %v; want %q ok=%v", tc.out, got, err, tc.want, tc.ok)
			}
		})
	}
}

// claimFor writes a goal and a claim asking agent to bid, and returns the
// bid request the agent would read.
func claimFor(t *testing.T, bb *blackboard.Client, agent, producer string) blackboard.InboxMessage {
	t.Helper()
	ctx := context.Background()
	g := blackboard.NewGoal("goal", 0, producer, nil)
	if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	claimID := blackboard.DeriveID("claim", g.ID)
	if _, err := bb.CreateClaim(ctx, blackboard.NewClaim{Epoch: 1, Claim: &blackboard.Claim{ID: claimID, ArtefactID: g.ID,
		WorkflowID: g.ID, Status: blackboard.ClaimPendingConsensus, ExpectedBidders: []string{agent}},
		ByArtefact: true, BidTimeout: time.Hour}); err != nil {
		t.Fatal(err)
	}
	return blackboard.InboxMessage{Agent: agent, Kind: blackboard.MessageBidRequest, ClaimID: claimID,
		ArtefactID: g.ID, WorkflowID: g.ID, ArtefactType: g.Type, StructuralType: g.StructuralType, ProducedByRole: producer}
}

func TestBidderDecide(t *testing.T) {
	t.Parallel()
	bb := redistest.Client(t)
	script := func(out string, failure tool.FailureKind) func(context.Context, tool.Spec) tool.Result {
		return func(context.Context, tool.Spec) tool.Result {
			return tool.Result{Stdout: []byte(out), Failure: failure, Detail: string(failure)}
		}
	}
	for _, tc := range []struct {
		name     string
		set      Config
		producer string
		run      func(context.Context, tool.Spec) tool.Result
		want     blackboard.Bid
		why      string
	}{
		{"static strategy", Config{Strategy: "exclusive"}, "user", nil, blackboard.BidExclusive, "bidding_strategy"},
		{"own output ignored", Config{Role: "me", Strategy: "exclusive"}, "me", nil, blackboard.BidIgnore, "own output"},
		{"own output opted in", Config{Role: "me", Strategy: "claim", BidOnOwnOutputs: true}, "me", nil, blackboard.BidClaim, "bidding_strategy"},
		{"type not consumed", Config{Strategy: "review", Consumes: []string{"Plan"}}, "user", nil, blackboard.BidIgnore, "type not consumed"},
		{"type consumed", Config{Strategy: "review", Consumes: []string{"Goal*"}}, "user", nil, blackboard.BidReview, "bidding_strategy"},
		{"bid script wins over consumes", Config{Strategy: "ignore", Consumes: []string{"Plan"}, BidScript: []string{"x"}}, "user",
			script("exclusive\n", ""), blackboard.BidExclusive, "bid_script"},
		{"bad script answer falls back", Config{Strategy: "review", BidScript: []string{"x"}}, "user",
			script("perhaps", ""), blackboard.BidReview, "bidding_strategy"},
		{"failed script falls back", Config{Strategy: "claim", BidScript: []string{"x"}}, "user",
			script("exclusive", tool.FailureTimeout), blackboard.BidClaim, "bidding_strategy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := tc.set
			set.Agent = "me"
			set.applyDefaults()
			b := NewBidder(bb, set.bidder(), nil, zerolog.Nop())
			var ran bool
			if tc.run != nil {
				b.RunFunc = func(ctx context.Context, s tool.Spec) tool.Result { ran = true; return tc.run(ctx, s) }
			}
			req := claimFor(t, bb, "me", tc.producer)
			got, why := b.Decide(context.Background(), req)
			if got != tc.want || why != tc.why {
				t.Fatalf("Decide = %q (%s), want %q (%s)", got, why, tc.want, tc.why)
			}
			if tc.run != nil && !ran && tc.why != "own output" {
				t.Fatal("the bid script did not run")
			}
		})
	}
}

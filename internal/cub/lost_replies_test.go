package cub

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/redistest"
)

// TestLostBidRequestIsAnsweredAfterTheFailedRead: a bid request that
// Redis delivered to the cub's consumer by a read whose reply was lost
// (here: taken inside MULTI, then the cub's blocked reads are cut) is
// read back from the pending list as soon as Redis answers again, and
// answered; before, it waited for the reclaim (2 × lease TTL: two hours
// here).
func TestLostBidRequestIsAnsweredAfterTheFailedRead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	name := "cub-" + redistest.Instance(t)
	bb := redistest.NamedClient(t, name)
	raw := redistest.Raw(t)

	// A claim that asks coder to bid; its bid request is taken out of the
	// inbox before the cub starts and comes back below as a lost reply.
	g := blackboard.NewGoal("lost bid request", 0, "user", nil)
	if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	cl := &blackboard.Claim{ID: blackboard.NewID(), ArtefactID: g.ID, WorkflowID: g.ID,
		Status: blackboard.ClaimPendingConsensus, ExpectedBidders: []string{"coder"}}
	req := blackboard.InboxMessage{Agent: "coder", Kind: blackboard.MessageBidRequest, ClaimID: cl.ID, ArtefactID: g.ID,
		WorkflowID: g.ID, ArtefactType: g.Type, StructuralType: g.StructuralType, ProducedByRole: g.ProducedByRole}
	// Epoch 1: no leader is elected here, so any epoch passes the fence.
	if _, err := bb.CreateClaim(ctx, blackboard.NewClaim{Claim: cl, BidTimeout: time.Hour, Epoch: 1,
		Inbox: []blackboard.InboxMessage{req}}); err != nil {
		t.Fatal(err)
	}
	inbox := bb.Keys().Inbox("coder")
	requests, err := raw.XRange(ctx, inbox, "-", "+").Result()
	if err != nil || len(requests) != 1 {
		t.Fatalf("inbox = %v, %v; want the claim's bid request", requests, err)
	}
	if err := raw.XDel(ctx, inbox, requests[0].ID).Err(); err != nil {
		t.Fatal(err)
	}

	set := Config{Agent: "coder", Role: "coder", Strategy: "exclusive", Command: []string{"true"},
		Consumer: "coder-1", LeaseTTL: time.Hour, HeartbeatTTL: time.Hour}
	c, err := New(bb, set, NewMetrics(nil), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	wg.Add(1)
	go func() { defer wg.Done(); _ = c.Run(cctx) }()
	// Past the start-up read of the pending list, with both reads blocked.
	eventually.True(t, 10*time.Second, "the cub's inbox reads to start and block", func() bool {
		return c.inbox.Started() && len(redistest.Blocked(t, raw, name)) >= 2
	})

	// Deliver the request to the cub's consumer unseen, then cut the reads.
	redistest.DeliverUnseen(t, raw, inbox, "cub", set.Consumer, requests[0].Values)
	if redistest.CutBlocked(t, raw, name) == 0 {
		t.Fatal("no blocked read of the cub to cut")
	}

	var bids map[string]blackboard.Bid
	var bidsErr error
	answered := eventually.Within(20*time.Second, func() bool {
		bids, bidsErr = bb.GetBids(ctx, cl.ID)
		_, ok := bids["coder"]
		return bidsErr == nil && ok
	})
	if !answered {
		t.Fatalf("20s after the failed reads the lost bid request is still unanswered (bids %v, %v)", bids, bidsErr)
	}
	if b := bids["coder"]; b != blackboard.BidExclusive {
		t.Fatalf("coder bid %q, want exclusive", b)
	}
}

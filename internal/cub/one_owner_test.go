package cub

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/tool"
)

// grantOf writes a goal and a claim on it granted exclusively to agent
// "me", with the grant in the agent's inbox (no orchestrator involved).
func grantOf(t *testing.T, bb *blackboard.Client) string {
	t.Helper()
	ctx := t.Context()
	g := blackboard.NewGoal("goal", 0, "user", nil)
	if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	cl := &blackboard.Claim{ID: blackboard.NewID(), ArtefactID: g.ID, WorkflowID: g.ID,
		Status: blackboard.ClaimPendingExclusive, GrantedExclusiveAgent: "me"}
	msg := blackboard.InboxMessage{Agent: "me", Kind: blackboard.MessageGrant, ClaimID: cl.ID, ArtefactID: g.ID,
		WorkflowID: g.ID, Grant: blackboard.GrantExclusive, Token: "1"}
	if _, err := bb.CreateClaim(ctx, blackboard.NewClaim{Epoch: 1, Claim: cl, ByArtefact: true,
		Grants: map[string]string{"me": "1"}, Inbox: []blackboard.InboxMessage{msg}}); err != nil {
		t.Fatal(err)
	}
	return cl.ID
}

// startCub runs a cub of agent "me" under consumer with the fake tool
// run; it stops when the test ends.
func startCub(t *testing.T, bb *blackboard.Client, consumer string, slots int, leaseTTL time.Duration, run func(context.Context, tool.Spec) tool.Result) {
	t.Helper()
	c, err := New(bb, Config{Agent: "me", Command: []string{"fake-tool"}, Workspace: t.TempDir(), MaxConcurrent: slots,
		LeaseTTL: leaseTTL, HeartbeatTTL: time.Second, Consumer: consumer}, NewMetrics(nil), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	c.Runner.RunFunc = run
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestOneSlotLeavesTheRestToSiblings: a cub with one slot and ten grants
// waiting takes one, and a sibling replica finds the other nine.
func TestOneSlotLeavesTheRestToSiblings(t *testing.T) {
	t.Parallel()
	bb := redistest.Client(t)
	for i := 0; i < 10; i++ {
		grantOf(t, bb)
	}
	started := make(chan struct{}, 10)
	startCub(t, bb, "cub-busy", 1, time.Minute, func(ctx context.Context, _ tool.Spec) tool.Result {
		started <- struct{}{}
		<-ctx.Done() // busy until the test ends
		return tool.Result{Failure: tool.FailureTimeout}
	})
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the cub never started a tool")
	}
	busy, err := bb.Inbox(t.Context(), "me", "cub-busy")
	if err != nil {
		t.Fatal(err)
	}
	if held, err := busy.PendingGrants(t.Context(), 100); err != nil || len(held) != 1 {
		t.Fatalf("the one-slot cub holds %d grants (%v), want 1", len(held), err)
	}
	sibling, err := bb.Inbox(t.Context(), "me", "cub-idle")
	if err != nil {
		t.Fatal(err)
	}
	if rest, err := sibling.NextGrants(t.Context(), 100, 0); err != nil || len(rest) != 9 {
		t.Fatalf("the sibling found %d grants (%v), want the other 9", len(rest), err)
	}
	if len(started) != 0 {
		t.Fatalf("the one-slot cub started %d more tools", len(started))
	}
}

// TestLongToolWithTwoReplicasRunsOnce: a tool that runs for many lease
// periods on one replica is never picked up by its idle sibling (the
// running cub keeps its inbox entry fresh and holds the lease).
func TestLongToolWithTwoReplicasRunsOnce(t *testing.T) {
	t.Parallel()
	bb := redistest.Client(t)
	claimID := grantOf(t, bb)
	// One second, not less: a heartbeat that a loaded machine delays past
	// the TTL lets the lease lapse, and then a second run is the right
	// outcome (at-least-once), not the one-owner property this tests.
	const leaseTTL = time.Second
	var runs, running, overlap atomic.Int32
	var once sync.Once
	first := make(chan struct{})
	run := func(ctx context.Context, _ tool.Spec) tool.Result {
		runs.Add(1)
		if running.Add(1) > 1 {
			overlap.Add(1)
		}
		defer running.Add(-1)
		once.Do(func() { close(first) })
		// The long tool: six lease periods, three times the idle time
		// after which a sibling reclaims an abandoned grant.
		select {
		case <-time.After(6 * leaseTTL):
		case <-ctx.Done():
			return tool.Result{Failure: tool.FailureTimeout}
		}
		return tool.Result{Stdout: []byte(`{"artefact_type":"Plan","artefact_payload":"done"}`)}
	}
	startCub(t, bb, "cub-a", 1, leaseTTL, run)
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		t.Fatal("no replica started the tool")
	}
	startCub(t, bb, "cub-b", 1, leaseTTL, run)
	eventually.True(t, 30*time.Second, "the result stored", func() bool {
		st, err := bb.GetClaimState(t.Context(), claimID, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, ok := st.Outputs["me"]
		return ok
	})
	if n, o := runs.Load(), overlap.Load(); n != 1 || o != 0 {
		t.Fatalf("the tool ran %d times (%d overlapping), want once", n, o)
	}
}

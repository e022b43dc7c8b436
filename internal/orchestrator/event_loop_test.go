package orchestrator

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/redistest"
)

// TestQueueEntryWhoseReplyWasLostIsHandledAfterTheFailedRead: when a
// read's reply is lost (a partition that drops what Redis sends, a
// connection cut while the read blocks), Redis has still delivered the
// entries of that read to the orchestrator's consumer. The loop reads its
// pending entries again as soon as it can read at all, instead of leaving
// them to the periodic sweep (an hour here).
func TestQueueEntryWhoseReplyWasLostIsHandledAfterTheFailedRead(t *testing.T) {
	t.Parallel()
	name := "loop-" + redistest.Instance(t)
	bb := redistest.NamedClient(t, name)
	f := newFixtureOn(t, Config{Claims: ClaimConfig{BidTimeout: time.Hour}, Agents: map[string]string{"coder": "coder"}}, bb)
	ctx := t.Context()
	raw := redistest.Raw(t)
	queue := bb.Keys().OrchestratorQueue()

	// The goal's queue entry, taken out of the queue before the loop
	// starts; it comes back below as a delivery whose reply is lost.
	g := blackboard.NewGoal("lost reply", 0, "user", nil)
	if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	entries, err := raw.XRange(ctx, queue, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var lost *redis.XMessage
	for i, e := range entries {
		if e.Values["event"] == string(blackboard.EventArtefactCreated) && e.Values["artefact_id"] == g.ID {
			lost = &entries[i]
		}
	}
	if lost == nil {
		t.Fatalf("queue = %v; want the goal's entry", entries)
	}
	if err := raw.XDel(ctx, queue, lost.ID).Err(); err != nil {
		t.Fatal(err)
	}

	loopCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	disp := NewDispatcher(2, 16)
	loop := NewEventLoop(EventLoopParams{Client: bb, Config: EventLoopConfig{Sweep: time.Hour}, Dispatcher: disp,
		Creator: f.creator, Advancer: f.advancer, Directory: f.dir, Metrics: NewMetrics(nil), Log: zerolog.Nop()})
	wg.Add(2)
	go func() { defer wg.Done(); _ = disp.Run(loopCtx) }()
	go func() { defer wg.Done(); _ = loop.Run(loopCtx) }()
	redistest.WaitBlocked(t, raw, name, 10*time.Second)

	// Deliver the entry to the orchestrator's consumer without the loop
	// seeing it, then make the read the loop is blocked in fail.
	redistest.DeliverUnseen(t, raw, queue, consumerGroup, consumerName, lost.Values)
	if redistest.CutBlocked(t, raw, name) == 0 {
		t.Fatal("no blocked read of the loop to cut")
	}

	var claimErr, lenErr error
	var left int64
	handled := eventually.Within(20*time.Second, func() bool {
		_, claimErr = bb.ClaimForArtefact(ctx, g.ID)
		left, lenErr = raw.XLen(ctx, queue).Result()
		return claimErr == nil && lenErr == nil && left == 0 // handled (its claim exists) and acknowledged
	})
	if !handled {
		t.Fatalf("20s after the failed read: claim of the goal: %v; queue entries left: %d (%v); want the entry handled and acknowledged", claimErr, left, lenErr)
	}
}

// TestSweepDoesNotHandleAnAcknowledgedEntryAgain: an entry handled since
// the last read has its acknowledgement waiting for the next read; the
// sweep of pending entries sends it first instead of handling the entry
// a second time.
func TestSweepDoesNotHandleAnAcknowledgedEntryAgain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{Claims: ClaimConfig{BidTimeout: time.Hour}, Agents: map[string]string{"coder": "coder"}})
	ctx := t.Context()
	g := blackboard.NewGoal("handled once", 0, "user", nil)
	if err := f.bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	ec, err := f.bb.QueueConsumer(ctx, consumerGroup, consumerName)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics(nil)
	loop := NewEventLoop(EventLoopParams{Client: f.bb, Config: EventLoopConfig{Sweep: time.Hour}, Dispatcher: NewDispatcher(1, 16),
		Creator: f.creator, Advancer: f.advancer, Directory: f.dir, Metrics: m, Log: zerolog.Nop()})
	loop.dead.init(ec, 5, zerolog.Nop())
	events, err := ec.Next(ctx, nil, 100, 0)
	if err != nil || len(events) == 0 {
		t.Fatalf("Next = %v, %v; want the queued entries", events, err)
	}
	for _, ev := range events {
		if ev.Type != blackboard.EventAgentRegistered && ev.Type != blackboard.EventArtefactCreated {
			t.Fatalf("unexpected entry %s", ev.Type)
		}
		// Handled: acknowledged with the next read (the dispatcher is
		// not running, so the acknowledgement is queued by hand).
		loop.acks = append(loop.acks, ev.StreamID)
	}
	before := m.Events.WithLabelValues(string(blackboard.EventArtefactCreated)).Value()
	if err := loop.handlePending(ctx, ec); err != nil {
		t.Fatal(err)
	}
	if after := m.Events.WithLabelValues(string(blackboard.EventArtefactCreated)).Value(); after != before {
		t.Errorf("the sweep dispatched %v acknowledged entries again, want none", after-before)
	}
	if n, err := redistest.Raw(t).XLen(ctx, f.bb.Keys().OrchestratorQueue()).Result(); err != nil || n != 0 {
		t.Errorf("queue length %d, %v after the sweep; want the handled entries acknowledged and deleted", n, err)
	}
}

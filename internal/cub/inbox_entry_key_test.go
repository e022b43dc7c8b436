package cub

import (
	"context"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

// A bid request and a grant with the same stream id (two streams, one
// millisecond) are both in flight at once: neither may shadow the other.
func TestBidAndGrantWithTheSameStreamIDAreTrackedApart(t *testing.T) {
	l := &InboxLoop{inflight: map[string]bool{}}
	bid := blackboard.InboxEntry{StreamID: "1732000000000-0", InboxMessage: blackboard.InboxMessage{Kind: blackboard.MessageBidRequest}}
	grant := blackboard.InboxEntry{StreamID: "1732000000000-0", InboxMessage: blackboard.InboxMessage{Kind: blackboard.MessageGrant}}
	if !l.track(entryKey(bid)) {
		t.Fatal("the bid request was not tracked")
	}
	if !l.track(entryKey(grant)) {
		t.Error("the grant was taken for the bid request already in flight")
	}
	if l.track(entryKey(bid)) {
		t.Error("the same bid request was tracked twice")
	}
	l.untrack(entryKey(bid))
	if !l.track(entryKey(bid)) {
		t.Error("an untracked bid request could not be tracked again")
	}
}

// A grant seen again while it waits for a slot (a pending list read
// after a lost reply returns it once more) is queued once: the second
// sighting must not run the same grant a second time after the first.
func TestAGrantSeenAgainWhileQueuedIsQueuedOnce(t *testing.T) {
	l := &InboxLoop{inflight: map[string]bool{}, m: NewMetrics(nil), slots: make(chan struct{}, 1)}
	l.slots <- struct{}{} // no free slot: queued grants wait
	g := blackboard.InboxEntry{StreamID: "1732000000000-0", InboxMessage: blackboard.InboxMessage{Kind: blackboard.MessageGrant, ClaimID: "c1"}}
	ctx, cancel := context.WithCancel(t.Context())
	l.queueGrant(ctx, nil, g)
	l.queueGrant(ctx, nil, g)
	if got := l.m.GrantsQueued.Value(); got != 1 {
		t.Errorf("grants queued = %v after seeing one grant twice, want 1", got)
	}
	if !l.inflight[entryKey(g)] {
		t.Error("the queued grant is not in flight")
	}
	cancel()
	l.wg.Wait()
	if l.inflight[entryKey(g)] || l.m.GrantsQueued.Value() != 0 {
		t.Errorf("after the stop: in flight %v, queued %v; want neither", l.inflight[entryKey(g)], l.m.GrantsQueued.Value())
	}
}

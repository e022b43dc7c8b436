package cub

import (
	"testing"

	"github.com/settdev/sett/pkg/blackboard"
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

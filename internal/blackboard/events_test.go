package blackboard_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// appendEvents appends n agent_registered events and returns their ids.
func appendEvents(tb testing.TB, c *blackboard.Client, n int) []string {
	tb.Helper()
	ids := make([]string, n)
	for i := range ids {
		id, err := c.AppendEvent(tb.Context(), blackboard.Event{Type: blackboard.EventAgentRegistered, Agent: "coder",
			Fields: map[string]string{"n": string(rune('a' + i))}})
		if err != nil {
			tb.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

func streamIDs(evs []blackboard.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.StreamID
	}
	return out
}

func TestAppendAndRangeEvents(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	if last, err := c.LastEventID(ctx); err != nil || last != "0-0" {
		t.Errorf("LastEventID on an empty stream = %q, %v; want 0-0", last, err)
	}
	before, err := c.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.AppendEvent(ctx, blackboard.Event{
		Type: blackboard.EventLeaseLost, WorkflowID: idA, ClaimID: idB, ArtefactID: idC, Agent: "coder",
		Fields: map[string]string{"token": "3", "reason": "expired"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ids := append([]string{id}, appendEvents(t, c, 3)...)

	all, err := c.RangeEvents(ctx, "-", "+", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(streamIDs(all), ids) {
		t.Fatalf("RangeEvents = %v, want %v", streamIDs(all), ids)
	}
	e := all[0]
	if e.Type != blackboard.EventLeaseLost || e.WorkflowID != idA || e.ClaimID != idB || e.ArtefactID != idC ||
		e.Agent != "coder" || e.Field("token") != "3" || e.Field("reason") != "expired" || len(e.Fields) != 2 || e.TsMs < before {
		t.Errorf("decoded event = %+v", e)
	}
	cases := []struct {
		name       string
		start, end string
		count      int64
		want       []string
	}{
		{"first two", "-", "+", 2, ids[:2]},
		{"from the third", ids[2], "+", 0, ids[2:]},
		{"closed range", ids[1], ids[2], 0, ids[1:3]},
		{"exclusive start", "(" + ids[2], "+", 0, ids[3:]},
	}
	for _, tc := range cases {
		got, err := c.RangeEvents(ctx, tc.start, tc.end, tc.count)
		if err != nil || !slices.Equal(streamIDs(got), tc.want) {
			t.Errorf("%s: got %v, %v; want %v", tc.name, streamIDs(got), err, tc.want)
		}
	}
	if last, err := c.LastEventID(ctx); err != nil || last != ids[3] {
		t.Errorf("LastEventID = %q, %v; want %s", last, err, ids[3])
	}
}

// TestEventConsumer checks at-least-once delivery: an event comes back from
// Pending until it is acknowledged, by Ack or piggybacked on Next.
func TestEventConsumer(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	ids := appendEvents(t, c, 3)
	ec, err := c.EventConsumer(ctx, "orchestrator", "orch-a")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ec.Next(ctx, nil, 10, 0)
	if err != nil || !slices.Equal(streamIDs(got), ids) {
		t.Fatalf("Next = %v, %v; want every event from the start %v", streamIDs(got), err, ids)
	}
	if got, err := ec.Next(ctx, nil, 10, 0); err != nil || len(got) != 0 {
		t.Errorf("second Next = %v, %v; want nothing new", streamIDs(got), err)
	}

	// A restart under the same consumer name gets the unacked events back.
	restarted, err := c.EventConsumer(ctx, "orchestrator", "orch-a")
	if err != nil {
		t.Fatal(err)
	}
	pending := func(ec *blackboard.EventConsumer) []string {
		t.Helper()
		p, err := ec.Pending(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		return streamIDs(p)
	}
	if p := pending(restarted); !slices.Equal(p, ids) {
		t.Errorf("Pending after restart = %v, want %v", p, ids)
	}
	if err := restarted.Ack(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if p := pending(restarted); !slices.Equal(p, ids[1:]) {
		t.Errorf("Pending after Ack = %v, want %v", p, ids[1:])
	}
	// Acks ride on Next.
	more := appendEvents(t, c, 1)
	got, err = restarted.Next(ctx, ids[1:], 10, 0)
	if err != nil || !slices.Equal(streamIDs(got), more) {
		t.Errorf("Next with acks = %v, %v; want %v", streamIDs(got), err, more)
	}
	if p := pending(restarted); !slices.Equal(p, more) {
		t.Errorf("Pending after piggybacked ack = %v, want only %v", p, more)
	}
	// Another consumer name has nothing pending; another group sees all.
	other, err := c.EventConsumer(ctx, "orchestrator", "orch-b")
	if err != nil {
		t.Fatal(err)
	}
	if p := pending(other); len(p) != 0 {
		t.Errorf("another consumer has %v pending", p)
	}
	audit, err := c.EventConsumer(ctx, "audit", "a")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := audit.Next(ctx, nil, 100, 0); err != nil || len(got) != 4 {
		t.Errorf("another group read %d events, %v; want 4", len(got), err)
	}
	if err := restarted.Ack(ctx); err != nil {
		t.Errorf("Ack of nothing: %v", err)
	}
}

// TestEventConsumerRecreatesGroup survives an operator deleting the
// stream: the next read recreates the group instead of failing for ever.
func TestEventConsumerRecreatesGroup(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	ec, err := c.EventConsumer(ctx, "orchestrator", "orch-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Del(ctx, c.Keys().Events()).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := ec.Next(ctx, nil, 10, 0); err != nil || len(got) != 0 {
		t.Fatalf("Next after the stream vanished = %v, %v; want nothing and no error", got, err)
	}
	ids := appendEvents(t, c, 1)
	if got, err := ec.Next(ctx, nil, 10, 0); err != nil || !slices.Equal(streamIDs(got), ids) {
		t.Errorf("Next after recreation = %v, %v; want %v", streamIDs(got), err, ids)
	}
}

// TestReadEventsBlocks starts a blocking read, waits until the server shows
// it blocked, then appends: the read returns the new event.
func TestReadEventsBlocks(t *testing.T) {
	t.Parallel()
	name := "blocked-read-" + blackboard.NewID()[:8]
	c := redistest.NamedClient(t, name)
	raw := redistest.Raw(t)
	ctx := t.Context()
	last, err := c.LastEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		evs []blackboard.Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		evs, err := c.ReadEvents(ctx, last, 10, waitFor)
		done <- result{evs, err}
	}()
	redistest.WaitBlocked(t, raw, name, waitFor)
	ids := appendEvents(t, c, 1)
	select {
	case r := <-done:
		if r.err != nil || !slices.Equal(streamIDs(r.evs), ids) {
			t.Errorf("ReadEvents = %v, %v; want %v", streamIDs(r.evs), r.err, ids)
		}
	case <-time.After(waitFor):
		t.Fatal("the blocked read never returned the appended event")
	}

	// Without block, reading past the end returns nothing at once.
	if evs, err := c.ReadEvents(ctx, ids[0], 10, 0); err != nil || len(evs) != 0 {
		t.Errorf("non-blocking read at the end = %v, %v", evs, err)
	}
	if evs, err := c.ReadEvents(ctx, "0", 10, 0); err != nil || !slices.Equal(streamIDs(evs), ids) {
		t.Errorf("read from the start = %v, %v", streamIDs(evs), err)
	}
}

// TestEventConsumerNextBlocks is TestReadEventsBlocks for the consumer
// group, with acks piggybacked on the blocking read.
func TestEventConsumerNextBlocks(t *testing.T) {
	t.Parallel()
	name := "blocked-group-" + blackboard.NewID()[:8]
	c := redistest.NamedClient(t, name)
	raw := redistest.Raw(t)
	ctx := t.Context()
	first := appendEvents(t, c, 1)
	ec, err := c.EventConsumer(ctx, "orchestrator", "orch-a")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ec.Next(ctx, nil, 10, 0); err != nil || len(got) != 1 {
		t.Fatalf("Next = %v, %v", got, err)
	}
	type result struct {
		evs []blackboard.Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		evs, err := ec.Next(ctx, first, 10, waitFor)
		done <- result{evs, err}
	}()
	redistest.WaitBlocked(t, raw, name, waitFor)
	ids := appendEvents(t, c, 1)
	select {
	case r := <-done:
		if r.err != nil || !slices.Equal(streamIDs(r.evs), ids) {
			t.Errorf("Next = %v, %v; want %v", streamIDs(r.evs), r.err, ids)
		}
	case <-time.After(waitFor):
		t.Fatal("the blocked Next never returned the appended event")
	}
	if p, err := ec.Pending(ctx, 10); err != nil || !slices.Equal(streamIDs(p), ids) {
		t.Errorf("Pending = %v, %v; want only %v (the first was acked)", streamIDs(p), err, ids)
	}
}

// TestBlockingReadsOutlastReadTimeout blocks longer than the go-redis
// ReadTimeout with nothing to read: the reads must end empty, not with an
// i/o timeout. go-redis applies ReadTimeout to a whole pipeline and honours
// a blocking command's own timeout only when it is sent alone.
func TestBlockingReadsOutlastReadTimeout(t *testing.T) {
	t.Parallel()
	const readTimeout = 100 * time.Millisecond
	const block = 4 * readTimeout
	c := redistest.NamedClient(t, "short-timeout-"+blackboard.NewID()[:8], func(o *redis.Options) { o.ReadTimeout = readTimeout })
	ctx := t.Context()
	ids := appendEvents(t, c, 1)
	ec, err := c.EventConsumer(ctx, "orchestrator", "orch-a")
	if err != nil {
		t.Fatal(err)
	}
	in, err := c.Inbox(ctx, "coder", "cub-1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		read func() (int, error)
		want int
	}{
		{"consumer with an event waiting and an ack", func() (int, error) { e, err := ec.Next(ctx, []string{"0-1"}, 10, block); return len(e), err }, 1},
		{"consumer, nothing to ack", func() (int, error) { e, err := ec.Next(ctx, nil, 10, block); return len(e), err }, 0},
		{"consumer with an ack", func() (int, error) { e, err := ec.Next(ctx, ids, 10, block); return len(e), err }, 0},
		{"inbox", func() (int, error) { e, err := in.NextBids(ctx, 10, block); return len(e), err }, 0},
		{"stream", func() (int, error) { e, err := c.ReadEvents(ctx, ids[0], 10, block); return len(e), err }, 0},
	}
	for _, tc := range cases {
		n, err := tc.read()
		if err != nil || n != tc.want {
			t.Errorf("%s: read %d entries, %v; want %d and no error", tc.name, n, err, tc.want)
		}
	}
	if p, err := ec.Pending(ctx, 10); err != nil || len(p) != 0 {
		t.Errorf("Pending = %v, %v; want the ack applied", streamIDs(p), err)
	}
}

// TestInbox covers the cub's side: entries come back until Done, and
// Reclaim takes over what a dead replica left.
func TestInbox(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	cl := pendingClaim(g, "coder")
	msg := bidRequest("coder", cl, g)
	createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: cl, ByArtefact: true, Inbox: []blackboard.InboxMessage{msg}})

	dead, err := c.Inbox(ctx, "coder", "cub-dead")
	if err != nil {
		t.Fatal(err)
	}
	got, err := dead.NextBids(ctx, 10, 0)
	if err != nil || len(got) != 1 || got[0].InboxMessage != msg {
		t.Fatalf("Next = %+v, %v; want the bid request %+v", got, err, msg)
	}
	live, err := c.Inbox(ctx, "coder", "cub-live")
	if err != nil {
		t.Fatal(err)
	}
	if p, err := live.PendingBids(ctx, 10); err != nil || len(p) != 0 {
		t.Errorf("live consumer's pending = %v, %v; want none", p, err)
	}
	if p, err := dead.PendingBids(ctx, 10); err != nil || len(p) != 1 || p[0].StreamID != got[0].StreamID {
		t.Errorf("dead consumer's pending = %v, %v", p, err)
	}
	reclaimed, err := live.ReclaimBids(ctx, 0, 10)
	if err != nil || len(reclaimed) != 1 || reclaimed[0].StreamID != got[0].StreamID || reclaimed[0].Agent != "coder" {
		t.Fatalf("Reclaim = %+v, %v", reclaimed, err)
	}
	if err := live.DoneBids(ctx, reclaimed[0].StreamID); err != nil {
		t.Fatal(err)
	}
	// Done acknowledges and deletes: the inbox holds only undone work.
	if n, err := raw.XLen(ctx, c.Keys().Inbox("coder")).Result(); err != nil || n != 0 {
		t.Errorf("inbox length after Done = %d, %v; want 0", n, err)
	}
	if p, err := live.PendingBids(ctx, 10); err != nil || len(p) != 0 {
		t.Errorf("pending after Done = %v, %v", p, err)
	}
	if err := live.DoneBids(ctx); err != nil {
		t.Errorf("Done of nothing: %v", err)
	}
	_, err = c.Inbox(ctx, "Coder", "x")
	wantErr(t, err, blackboard.ErrInvalid)
}

// TestGrantsAreReadByFreeSlots delivers three grants to one agent: a busy
// replica reading only as many as it has free slots leaves the rest to an
// idle sibling, and a dead replica's grants come back by reclaim.
func TestGrantsAreReadByFreeSlots(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	var want []string
	for i := 0; i < 3; i++ {
		g := startWorkflow(t, c)
		cl := pendingClaim(g, "coder")
		cl.Status, cl.GrantedExclusiveAgent = blackboard.ClaimPendingExclusive, "coder"
		createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: cl, ByArtefact: true, Grants: map[string]string{"coder": "1"},
			Inbox: []blackboard.InboxMessage{grantMessage("coder", cl, blackboard.GrantExclusive, "1")}})
		want = append(want, cl.ID)
	}
	busy, err := c.Inbox(ctx, "coder", "cub-busy")
	if err != nil {
		t.Fatal(err)
	}
	idle, err := c.Inbox(ctx, "coder", "cub-idle")
	if err != nil {
		t.Fatal(err)
	}
	one, err := busy.NextGrants(ctx, 1, 0)
	if err != nil || len(one) != 1 || one[0].ClaimID != want[0] {
		t.Fatalf("busy replica read %+v, %v; want the first grant only", one, err)
	}
	if bids, err := busy.NextBids(ctx, 10, 0); err != nil || len(bids) != 0 {
		t.Errorf("grants showed up as bid requests: %+v, %v", bids, err)
	}
	rest, err := idle.NextGrants(ctx, 10, 0)
	if err != nil || len(rest) != 2 || rest[0].ClaimID != want[1] || rest[1].ClaimID != want[2] {
		t.Fatalf("idle replica read %+v, %v; want the other two", rest, err)
	}
	if again, err := busy.ReclaimGrants(ctx, time.Hour, 10); err != nil || len(again) != 0 {
		t.Errorf("reclaim of fresh grants = %+v, %v; want none", again, err)
	}
	back, err := busy.ReclaimGrants(ctx, 0, 1)
	if err != nil || len(back) != 1 {
		t.Fatalf("reclaim of idle grants = %+v, %v; want one (the count asked)", back, err)
	}
	if err := busy.DoneGrants(ctx, one[0].StreamID, back[0].StreamID); err != nil {
		t.Fatal(err)
	}
}

// TestSubscribe receives the pub/sub JSON published with an
// artefact_created event.
func TestSubscribe(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	k := c.Keys()
	sub, err := c.Subscribe(ctx, k.ArtefactEvents(), k.WorkflowEvents())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Close() })
	g := startWorkflow(t, c)
	streamEvents := allEvents(t, c)

	got := map[string]map[string]any{}
	timeout := time.After(waitFor)
	for len(got) < 2 {
		select {
		case n, ok := <-sub.C():
			if !ok {
				t.Fatal("subscription closed early")
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(n.Payload), &doc); err != nil {
				t.Fatalf("payload %q on %s is not JSON: %v", n.Payload, n.Channel, err)
			}
			doc["channel"] = n.Channel
			got[doc["event"].(string)] = doc
		case <-timeout:
			t.Fatalf("received %v, want workflow_started and artefact_created", got)
		}
	}
	created := got["artefact_created"]
	want := map[string]any{
		"channel": k.ArtefactEvents(), "event": "artefact_created", "artefact_id": g.ID, "workflow_id": g.ID,
		"logical_id": g.ID, "version": "1", "type": "GoalDefined", "structural_type": "Standard",
		"produced_by_role": "user", "depth": "0", "ts": float64(g.CreatedAtMs),
		"id": streamEvents[len(streamEvents)-1].StreamID, // the stream entry it announces
	}
	for f, v := range want {
		if created[f] != v {
			t.Errorf("artefact_created field %s = %v, want %v", f, created[f], v)
		}
	}
	if started := got["workflow_started"]; started["channel"] != k.WorkflowEvents() || started["workflow_id"] != g.ID {
		t.Errorf("workflow_started = %v", started)
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sub.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestLostRepliesAfterABrokenRead: a read whose connection is cut while
// it blocks is retried by go-redis on another connection and succeeds;
// LostReplies says so until the pending list is read (the cut read may
// have delivered entries whose reply went nowhere). Reads without a
// failure never report it: that would make the orchestrator read its
// pending list after every read.
func TestLostRepliesAfterABrokenRead(t *testing.T) {
	t.Parallel()
	name := "lost-replies-" + blackboard.NewID()[:8]
	c := redistest.NamedClient(t, name)
	raw := redistest.Raw(t)
	ctx := t.Context()
	ec, err := c.EventConsumer(ctx, "orchestrator", "orch-a")
	if err != nil {
		t.Fatal(err)
	}
	next := func(ack []string, cut bool) []string {
		t.Helper()
		type result struct {
			evs []blackboard.Event
			err error
		}
		done := make(chan result, 1)
		go func() {
			evs, err := ec.Next(ctx, ack, 10, waitFor)
			done <- result{evs, err}
		}()
		id := redistest.WaitBlocked(t, raw, name, waitFor)
		if cut {
			if err := raw.ClientKillByFilter(ctx, "ID", id).Err(); err != nil {
				t.Fatal(err)
			}
			// go-redis retries on a new connection: wait for it to block.
			redistest.WaitBlocked(t, raw, name, waitFor)
		}
		ids := appendEvents(t, c, 1)
		select {
		case r := <-done:
			if r.err != nil || !slices.Equal(streamIDs(r.evs), ids) {
				t.Fatalf("Next = %v, %v; want %v", streamIDs(r.evs), r.err, ids)
			}
		case <-time.After(waitFor):
			t.Fatal("the blocked Next never returned the appended event")
		}
		return ids
	}
	ids := next(nil, false)
	ids = next(ids, false)
	if ec.LostReplies() {
		t.Fatal("LostReplies after reads that did not fail")
	}
	ids = next(ids, true)
	if !ec.LostReplies() {
		t.Fatal("no LostReplies after a read whose connection was cut")
	}
	ids = next(ids, false)
	if !ec.LostReplies() {
		t.Fatal("LostReplies forgotten before the pending list was read")
	}
	if _, err := ec.Pending(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if ec.LostReplies() {
		t.Fatal("LostReplies still set after the pending list was read")
	}
	next(ids, false)
	if ec.LostReplies() {
		t.Fatal("LostReplies after a read that did not fail")
	}
}

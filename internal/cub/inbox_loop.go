package cub

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/failpoint"
	"github.com/settdev/sett/internal/writeretry"
)

// maxConcurrentBids bounds bid decisions in flight (bid scripts included).
const maxConcurrentBids = 64

// readBlock bounds each blocking read, so that the loops notice a stop
// promptly and look for stale entries regularly.
const readBlock = 2 * time.Second

// InboxLoop serves the agent's two streams. Bid requests are read and
// answered whatever the tools are doing, each in its own goroutine, so
// bidding never waits for work. Grants are read only when a slot is free,
// and only as many as there are free slots: a busy replica leaves the
// rest for its idle siblings. An entry is acknowledged (and deleted) only
// when it is fully handled; one whose handling failed stays pending and
// comes back by the periodic reclaim, or after a restart.
type InboxLoop struct {
	bb     *blackboard.Client
	cfg    InboxLoopConfig
	bidder *Bidder
	runner *WorkRunner
	keeper *LeaseKeeper
	m      *Metrics
	log    zerolog.Logger

	slots    chan struct{}
	bids     chan struct{}
	mu       sync.Mutex
	inflight map[string]bool
	wg       sync.WaitGroup
	started  atomic.Bool
	// work is the context grants run under (set by Run): it outlives the
	// reading context by the drain.
	work context.Context
}

// InboxLoopParams is what NewInboxLoop wires together.
type InboxLoopParams struct {
	Client  *blackboard.Client
	Config  InboxLoopConfig
	Bidder  *Bidder
	Runner  *WorkRunner
	Keeper  *LeaseKeeper
	Metrics *Metrics
	// Log has no component; the loop adds its own.
	Log zerolog.Logger
}

// NewInboxLoop wires the loop; at most p.Config.MaxConcurrent tools run at
// once.
func NewInboxLoop(p InboxLoopParams) *InboxLoop {
	return &InboxLoop{bb: p.Client, cfg: p.Config, bidder: p.Bidder, runner: p.Runner, keeper: p.Keeper, m: p.Metrics,
		log: p.Log.With().Str("component", "inbox_loop").Logger(), inflight: map[string]bool{},
		slots: make(chan struct{}, p.Config.MaxConcurrent), bids: make(chan struct{}, maxConcurrentBids)}
}

// Started reports whether the loop is reading its streams.
func (l *InboxLoop) Started() bool { return l.started.Load() }

// Run serves both streams until ctx ends, then waits for running
// handlers. Grants run under work, which the caller ends at the end of the
// drain (or with ctx, for none): when ctx ends no new grant starts, and
// those running go on until they finish or work ends.
func (l *InboxLoop) Run(ctx, work context.Context) error {
	l.work = work
	defer l.wg.Wait()
	inbox, err := l.bb.Inbox(ctx, l.cfg.Agent, l.cfg.Consumer)
	if err != nil {
		return err
	}
	bids, err := inbox.PendingBids(ctx, 1000)
	if err != nil {
		return err
	}
	grants, err := inbox.PendingGrants(ctx, 1000)
	if err != nil {
		return err
	}
	if len(bids)+len(grants) > 0 {
		l.log.Info().Int("bid_requests", len(bids)).Int("grants", len(grants)).Msg("resuming unfinished inbox entries")
	}
	for _, e := range bids {
		l.handleBid(ctx, inbox, e)
	}
	// Grants taken before a restart are ours: each waits for a slot.
	for _, e := range grants {
		l.queueGrant(ctx, inbox, e)
	}
	l.started.Store(true)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); l.bidLoop(ctx, inbox) }()
	l.grantLoop(ctx, inbox)
	wg.Wait()
	return nil
}

// bidLoop reads bid requests until ctx ends.
func (l *InboxLoop) bidLoop(ctx context.Context, inbox *blackboard.Inbox) {
	lastReclaim := time.Now()
	for ctx.Err() == nil {
		// A read failed or a connection broke while it ran, so Redis may
		// have delivered requests whose reply went nowhere; they are read
		// back from the pending list as soon as Redis answers (handleBid
		// skips those in flight), not left to the reclaim. A failed read
		// back leaves the report set for the next turn.
		var entries []blackboard.InboxEntry
		if inbox.LostBids() {
			entries, _ = inbox.PendingBids(ctx, 1000)
		}
		fresh, err := inbox.NextBids(ctx, 32, readBlock)
		for _, e := range append(entries, fresh...) {
			if e.Kind == blackboard.MessageGrant {
				// Written by an orchestrator from before grants had their
				// own stream: still work to do.
				l.queueGrant(ctx, inbox, e)
				continue
			}
			l.handleBid(ctx, inbox, e)
		}
		if err != nil {
			l.readFailed(ctx, "bid requests", err)
			continue
		}
		if time.Since(lastReclaim) >= l.cfg.LeaseTTL {
			lastReclaim = time.Now()
			stale, err := inbox.ReclaimBids(ctx, 2*l.cfg.LeaseTTL, 100)
			if err != nil && ctx.Err() == nil {
				l.log.Warn().Err(err).Msg("reclaiming stale bid requests failed")
			}
			for _, e := range stale {
				l.handleBid(ctx, inbox, e)
			}
		}
	}
}

// grantLoop reads grants when slots are free, as many as are free, until
// ctx ends; each grant runs in its own goroutine holding one slot.
func (l *InboxLoop) grantLoop(ctx context.Context, inbox *blackboard.Inbox) {
	lastReclaim := time.Now()
	for {
		select {
		case l.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		n := 1 + l.takeFreeSlots()
		if inbox.LostGrants() {
			// As in bidLoop: grants a failed read delivered wait in the
			// pending list; each is queued for a slot (queueGrant skips
			// those already queued or running).
			pending, _ := inbox.PendingGrants(ctx, 1000)
			for _, e := range pending {
				l.queueGrant(ctx, inbox, e)
			}
		}
		entries, err := inbox.NextGrants(ctx, int64(n), readBlock)
		if err != nil {
			l.releaseSlots(n)
			l.readFailed(ctx, "grants", err)
			continue
		}
		if len(entries) < n && time.Since(lastReclaim) >= l.cfg.LeaseTTL {
			// Grants a dead sibling took: live replicas keep theirs fresh,
			// so only abandoned ones are idle this long.
			lastReclaim = time.Now()
			stale, err := inbox.ReclaimGrants(ctx, 2*l.cfg.LeaseTTL, int64(n-len(entries)))
			if err != nil && ctx.Err() == nil {
				l.log.Warn().Err(err).Msg("reclaiming stale grants failed")
			}
			entries = append(entries, stale...)
		}
		l.releaseSlots(n - len(entries))
		for _, e := range entries {
			l.startGrant(ctx, inbox, e)
		}
	}
}

// takeFreeSlots takes every other free slot without waiting, so that one
// read fetches as many grants as the cub can start now.
func (l *InboxLoop) takeFreeSlots() int {
	n := 0
	for {
		select {
		case l.slots <- struct{}{}:
			n++
		default:
			return n
		}
	}
}

func (l *InboxLoop) releaseSlots(n int) {
	for i := 0; i < n; i++ {
		<-l.slots
	}
}

func (l *InboxLoop) readFailed(ctx context.Context, what string, err error) {
	if ctx.Err() != nil {
		return
	}
	l.log.Warn().Err(err).Str("stream", what).Msg("reading the inbox failed; retrying")
	select {
	case <-ctx.Done():
	case <-time.After(500 * time.Millisecond):
	}
}

// entryKey names an inbox entry among those in flight. Bid requests and
// grants live in two streams whose ids are independent: a claim's bid
// request and another claim's grant written in the same millisecond get
// the same stream id, so the id alone would make one of them look already
// in flight and leave it to the slow reclaim.
func entryKey(e blackboard.InboxEntry) string { return string(e.Kind) + "|" + e.StreamID }

// track marks an entry in flight; false when it already is (a pending
// entry seen again by a reclaim).
func (l *InboxLoop) track(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inflight[id] {
		return false
	}
	l.inflight[id] = true
	return true
}

func (l *InboxLoop) untrack(id string) {
	l.mu.Lock()
	delete(l.inflight, id)
	l.mu.Unlock()
}

// handleBid answers a bid request in its own goroutine; the bid script
// acknowledges the request in the same step.
func (l *InboxLoop) handleBid(ctx context.Context, inbox *blackboard.Inbox, e blackboard.InboxEntry) {
	if !l.track(entryKey(e)) {
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer l.untrack(entryKey(e))
		if e.Kind != blackboard.MessageBidRequest {
			l.log.Warn().Str("kind", string(e.Kind)).Str("stream_id", e.StreamID).Msg("unknown inbox entry; dropping it")
			if err := inbox.DoneBids(context.WithoutCancel(ctx), e.StreamID); err != nil {
				l.log.Warn().Err(err).Msg("acknowledging an inbox entry failed; it will be seen again (harmless)")
			}
			return
		}
		l.bid(ctx, e)
	}()
}

// queueGrant runs a grant that is already this cub's (pending after a
// restart or a lost reply, or found in the old shared stream) as soon as
// a slot is free. It is in flight from now on, so a second sighting of
// the same entry while it waits or runs is ignored.
func (l *InboxLoop) queueGrant(ctx context.Context, inbox *blackboard.Inbox, e blackboard.InboxEntry) {
	if !l.track(entryKey(e)) {
		return
	}
	l.m.GrantsQueued.Inc()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		select {
		case l.slots <- struct{}{}:
			l.m.GrantsQueued.Dec()
			l.runGrant(ctx, inbox, e)
		case <-ctx.Done():
			l.m.GrantsQueued.Dec()
			l.untrack(entryKey(e))
		}
	}()
}

// startGrant runs grant e in its own goroutine unless it is in flight
// already; the caller holds one slot for it, which is released when the
// grant ends (or at once when it does not run).
func (l *InboxLoop) startGrant(ctx context.Context, inbox *blackboard.Inbox, e blackboard.InboxEntry) {
	if !l.track(entryKey(e)) {
		<-l.slots
		return
	}
	l.runGrant(ctx, inbox, e)
}

// runGrant runs tracked grant e in its own goroutine, which releases its
// slot and its tracking when the grant ends. The grant runs under l.work,
// not ctx: a cub that is stopping lets it finish within the drain.
func (l *InboxLoop) runGrant(_ context.Context, inbox *blackboard.Inbox, e blackboard.InboxEntry) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer func() { <-l.slots }()
		defer l.untrack(entryKey(e))
		if l.grant(l.work, e, time.Now()) == Dropped {
			failpoint.Hit("cub-entry-done")
			if err := inbox.DoneGrants(context.WithoutCancel(l.work), e.StreamID); err != nil {
				l.log.Warn().Err(err).Msg("acknowledging a grant failed; it will be seen again (harmless)")
			}
		}
	}()
}

// bid answers a bid request.
func (l *InboxLoop) bid(ctx context.Context, req blackboard.InboxEntry) {
	select {
	case l.bids <- struct{}{}:
		defer func() { <-l.bids }()
	case <-ctx.Done():
		return
	}
	bid, why := l.bidder.Decide(ctx, req.InboxMessage)
	log := l.log.With().Str("claim_id", req.ClaimID).Str("bid", string(bid)).Str("why", why).Logger()
	// Retried in place until the bid deadline: a Redis blip must not turn
	// the bid into a silent ignore (the reclaim comes long after it).
	err := writeretry.Until(ctx, l.bidDeadline(req), func(ctx context.Context) error {
		return l.bb.AnswerBidRequest(ctx, req, bid)
	}, func(err error, wait time.Duration) {
		l.m.WriteRetries.WithLabelValues("bid").Inc()
		log.Warn().Err(err).Dur("wait", wait).Msg("submitting the bid failed; retrying until the bid deadline")
	})
	switch {
	case err == nil:
		l.m.Bids.WithLabelValues(string(bid)).Inc()
		log.Debug().Msg("bid submitted")
	case errors.Is(err, blackboard.ErrExists), errors.Is(err, blackboard.ErrStaleStatus),
		errors.Is(err, blackboard.ErrNotInvited), errors.Is(err, blackboard.ErrNotFound):
		// Already bid, consensus over (the bid came too late and counted
		// as ignore), or the claim is gone: nothing left to do.
		log.Info().Err(err).Msg("bid not needed")
	default:
		if ctx.Err() == nil {
			log.Warn().Err(err).Msg("submitting the bid failed; will retry")
		}
		return
	}
	failpoint.Hit("cub-entry-done")
}

// bidDeadline is when a bid on req stops mattering: the request's
// delivery (its stream id is the server clock) plus the bid timeout. A
// request read late still gets a second of attempts, so that its answer
// (counted as ignore by then) acknowledges it.
func (l *InboxLoop) bidDeadline(req blackboard.InboxEntry) time.Time {
	deadline := time.Now().Add(l.cfg.BidTimeout)
	if ms, ok := blackboard.StreamIDTime(req.StreamID); ok {
		deadline = ms.Add(l.cfg.BidTimeout)
	}
	return later(deadline, time.Now().Add(time.Second))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// grant takes the lease (reading the claim, target and workflow in the
// same round trip) and runs the grant; the caller holds its slot.
func (l *InboxLoop) grant(ctx context.Context, g blackboard.InboxEntry, readAt time.Time) Outcome {
	log := l.log.With().Str("claim_id", g.ClaimID).Str("grant", string(g.Grant)).Str("token", g.Token).Logger()
	if l.keeper.Holding(g.ClaimID) {
		return Retry // this cub already works on the claim under a lease
	}
	// Retried in place for a lease period: the orchestrator's lease check
	// counts from the delivery, so a grant taken later is lost anyway.
	var view *blackboard.GrantView
	err := writeretry.Until(ctx, readAt.Add(l.cfg.LeaseTTL), func(ctx context.Context) error {
		var err error
		view, err = l.bb.TakeGrant(ctx, g.InboxMessage, l.cfg.Consumer, l.cfg.LeaseTTL)
		return err
	}, func(err error, wait time.Duration) {
		l.m.WriteRetries.WithLabelValues("grant").Inc()
		log.Warn().Err(err).Dur("wait", wait).Msg("taking the grant failed; retrying")
	})
	switch {
	case err == nil:
	case errors.Is(err, blackboard.ErrStaleGrant):
		// A newer grant of this claim to this agent exists: it keeps the
		// agent's slot.
		log.Info().Err(err).Msg("grant re-issued; dropping this copy")
		return Dropped
	case errors.Is(err, blackboard.ErrLeaseHeld):
		// Another replica runs this very grant and keeps it alive; its
		// result acknowledges the entry.
		log.Info().Err(err).Msg("another replica holds this grant; leaving it to it")
		return Retry
	case errors.Is(err, blackboard.ErrExists), errors.Is(err, blackboard.ErrStaleStatus), errors.Is(err, blackboard.ErrNotFound):
		// The claim no longer needs this agent: free the slot the grant
		// took so that the agent's next waiting grant can run.
		log.Info().Err(err).Msg("grant no longer current; dropping it")
		if rerr := l.bb.ReleaseGrant(context.WithoutCancel(ctx), l.cfg.Agent, g.ClaimID); rerr != nil {
			log.Warn().Err(rerr).Msg("releasing the agent slot of a dropped grant failed")
		}
		return Dropped
	default:
		if ctx.Err() == nil {
			log.Warn().Err(err).Msg("taking the grant failed; will retry")
		}
		return Retry
	}
	workCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fence := l.keeper.Hold(g.ClaimID, g.Token, g.StreamID, cancel)
	l.m.Grants.WithLabelValues(string(g.Grant)).Inc()
	outcome, err := l.runner.Run(workCtx, g, view, readAt, fence)
	switch {
	case outcome == Stored:
		l.keeper.Forget(g.ClaimID) // released by the result's own script
	case ctx.Err() != nil:
		// The drain ran out of time (ctx is the cub's work context): the
		// tool was stopped unfinished, through no fault of the work.
		l.keeper.HandBack(context.WithoutCancel(ctx), g.ClaimID)
	default:
		l.keeper.Drop(context.WithoutCancel(ctx), g.ClaimID)
	}
	if err != nil && workCtx.Err() == nil {
		log.Warn().Err(err).Msg("running the grant failed; will retry")
	}
	return outcome
}

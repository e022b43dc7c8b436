package cub

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/failpoint"
	"github.com/settdev/sett/pkg/blackboard"
)

// maxConcurrentBids bounds bid decisions in flight (bid scripts included).
const maxConcurrentBids = 64

// InboxLoop reads the agent's inbox and handles each entry in its own
// goroutine, so that bid requests are answered while tools run. An entry is
// acknowledged (and deleted) only when it is fully handled; an entry whose
// handling failed stays pending and is taken up again by the periodic
// reclaim, or after a restart.
type InboxLoop struct {
	bb     *blackboard.Client
	set    Settings
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
}

// NewInboxLoop wires the loop; at most set.MaxConcurrent tools run at once.
func NewInboxLoop(bb *blackboard.Client, set Settings, bidder *Bidder, runner *WorkRunner, keeper *LeaseKeeper, m *Metrics, log zerolog.Logger) *InboxLoop {
	return &InboxLoop{bb: bb, set: set, bidder: bidder, runner: runner, keeper: keeper, m: m,
		log: log.With().Str("component", "inbox_loop").Logger(), inflight: map[string]bool{},
		slots: make(chan struct{}, set.MaxConcurrent), bids: make(chan struct{}, maxConcurrentBids)}
}

// Started reports whether the loop is reading its inbox.
func (l *InboxLoop) Started() bool { return l.started.Load() }

// Run reads the inbox until ctx ends, then waits for running handlers.
func (l *InboxLoop) Run(ctx context.Context) error {
	defer l.wg.Wait()
	inbox, err := l.bb.Inbox(ctx, l.set.Agent, l.set.Consumer)
	if err != nil {
		return err
	}
	pending, err := inbox.Pending(ctx, 1000)
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		l.log.Info().Int("entries", len(pending)).Msg("resuming unfinished inbox entries")
	}
	for _, e := range pending {
		l.handle(ctx, inbox, e)
	}
	l.started.Store(true)
	reclaimEvery := l.set.LeaseTTL
	lastReclaim := time.Now()
	for ctx.Err() == nil {
		entries, err := inbox.Next(ctx, 32, 2*time.Second)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			l.log.Warn().Err(err).Msg("reading the inbox failed; retrying")
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		for _, e := range entries {
			l.handle(ctx, inbox, e)
		}
		if time.Since(lastReclaim) >= reclaimEvery {
			lastReclaim = time.Now()
			stale, err := inbox.Reclaim(ctx, 2*l.set.LeaseTTL, 100)
			if err != nil && ctx.Err() == nil {
				l.log.Warn().Err(err).Msg("reclaiming stale inbox entries failed")
			}
			for _, e := range stale {
				l.handle(ctx, inbox, e)
			}
		}
	}
	return nil
}

func (l *InboxLoop) handle(ctx context.Context, inbox *blackboard.Inbox, e blackboard.InboxEntry) {
	l.mu.Lock()
	if l.inflight[e.StreamID] {
		l.mu.Unlock()
		return
	}
	l.inflight[e.StreamID] = true
	l.mu.Unlock()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer func() {
			l.mu.Lock()
			delete(l.inflight, e.StreamID)
			l.mu.Unlock()
		}()
		var outcome Outcome
		switch e.Kind {
		case blackboard.MessageBidRequest:
			outcome = l.bid(ctx, e)
		case blackboard.MessageGrant:
			outcome = l.grant(ctx, e, time.Now())
		default:
			l.log.Warn().Str("kind", string(e.Kind)).Str("stream_id", e.StreamID).Msg("unknown inbox entry; dropping it")
			outcome = Dropped
		}
		if outcome == Dropped {
			failpoint.Hit("cub-entry-done")
			if err := inbox.Done(context.WithoutCancel(ctx), e.StreamID); err != nil {
				l.log.Warn().Err(err).Msg("acknowledging an inbox entry failed; it will be seen again (harmless)")
			}
		}
	}()
}

// bid answers a bid request; the bid script acknowledges the request in
// the same step.
func (l *InboxLoop) bid(ctx context.Context, req blackboard.InboxEntry) Outcome {
	select {
	case l.bids <- struct{}{}:
		defer func() { <-l.bids }()
	case <-ctx.Done():
		return Retry
	}
	bid, why := l.bidder.Decide(ctx, req.InboxMessage)
	err := l.bb.AnswerBidRequest(ctx, req, bid)
	log := l.log.With().Str("claim_id", req.ClaimID).Str("bid", string(bid)).Str("why", why).Logger()
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
		return Retry
	}
	failpoint.Hit("cub-entry-done")
	return Stored
}

// grant takes the lease (reading the claim, target and workflow in the
// same round trip), waits for a worker slot and runs the grant.
func (l *InboxLoop) grant(ctx context.Context, g blackboard.InboxEntry, readAt time.Time) Outcome {
	log := l.log.With().Str("claim_id", g.ClaimID).Str("grant", string(g.Grant)).Str("token", g.Token).Logger()
	if l.keeper.Holding(g.ClaimID) {
		return Retry // this cub already works on the claim under a lease
	}
	view, err := l.bb.TakeGrant(ctx, g.InboxMessage, l.set.LeaseTTL)
	switch {
	case err == nil:
	case errors.Is(err, blackboard.ErrStaleGrant):
		// A newer grant of this claim to this agent exists: it keeps the
		// agent's slot.
		log.Info().Err(err).Msg("grant re-issued; dropping this copy")
		return Dropped
	case errors.Is(err, blackboard.ErrExists), errors.Is(err, blackboard.ErrStaleStatus), errors.Is(err, blackboard.ErrNotFound):
		// The claim no longer needs this agent: free the slot the grant
		// took so that the agent's next waiting grant can run.
		log.Info().Err(err).Msg("grant no longer current; dropping it")
		if rerr := l.bb.ReleaseGrant(context.WithoutCancel(ctx), l.set.Agent, g.ClaimID); rerr != nil {
			log.Warn().Err(rerr).Msg("releasing the agent slot of a dropped grant failed")
		}
		return Dropped
	default:
		if ctx.Err() == nil {
			log.Warn().Err(err).Msg("taking the grant failed; will retry")
		}
		return Retry
	}
	workCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	l.keeper.Hold(g.ClaimID, g.Token, cancel)
	l.m.Grants.WithLabelValues(string(g.Grant)).Inc()

	l.m.GrantsQueued.Inc()
	select {
	case l.slots <- struct{}{}:
		l.m.GrantsQueued.Dec()
	case <-workCtx.Done():
		l.m.GrantsQueued.Dec()
		l.keeper.Drop(context.WithoutCancel(ctx), g.ClaimID)
		return Retry
	}
	defer func() { <-l.slots }()
	outcome, err := l.runner.Run(workCtx, g, view, readAt)
	if outcome == Stored {
		l.keeper.Forget(g.ClaimID) // released by the result's own script
	} else {
		l.keeper.Drop(context.WithoutCancel(ctx), g.ClaimID)
	}
	if err != nil && workCtx.Err() == nil {
		log.Warn().Err(err).Msg("running the grant failed; will retry")
	}
	return outcome
}

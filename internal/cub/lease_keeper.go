package cub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/tool"
)

// LeaseKeeper heartbeats the agent and renews the work lease of every grant
// the cub holds (queued or running) in one round trip per beat. A lease
// found lost cancels the work of that grant: its result would be refused
// anyway, because the orchestrator has re-issued the grant.
//
// Safe for concurrent use.
type LeaseKeeper struct {
	bb  *blackboard.Client
	cfg LeaseKeeperConfig
	m   *Metrics
	log zerolog.Logger

	mu     sync.Mutex
	held   map[string]heldLease // claim id → lease
	beatOK time.Time
	poke   chan struct{}
	// sender runs the round trips while Run runs (beats before it, or
	// without it, run on goroutines of their own).
	sender *beatSender
}

type heldLease struct {
	token    string
	streamID string
	cancel   context.CancelCauseFunc
	// renewedAt is when the last renewal that succeeded was sent (or the
	// lease taken): Redis keeps the lease until at least renewedAt plus
	// the lease TTL, and not much longer.
	renewedAt time.Time
	// fence is the deadline the tool's sandbox kills it at on its own
	// (see watchdogDeadline).
	fence *tool.Fence
}

// watchdogDeadline is when the sandbox of a tool whose lease was last
// renewed at renewedAt kills it without asking the cub: five sixths of the
// TTL, after the keeper's own fence (two thirds, see fenceUnrenewed) and
// before Redis can let the lease expire (the whole TTL), so that the tool
// is gone before the claim can be granted again even when this cub is
// stopped, starved or frozen. The sixth left is the margin for the kill
// itself.
func (k *LeaseKeeper) watchdogDeadline(renewedAt time.Time) time.Time {
	return renewedAt.Add(k.cfg.LeaseTTL * 5 / 6)
}

// errLeaseLost cancels work whose lease Redis no longer holds for this
// grant (withdrawn or re-granted): the tool is stopped with its grace.
var errLeaseLost = errors.New("cub: work lease lost")

// NewLeaseKeeper returns a keeper for the agent cfg describes.
func NewLeaseKeeper(bb *blackboard.Client, cfg LeaseKeeperConfig, m *Metrics, log zerolog.Logger) *LeaseKeeper {
	return &LeaseKeeper{bb: bb, cfg: cfg, m: m, held: map[string]heldLease{}, poke: make(chan struct{}, 1),
		sender: newBeatSender(), log: log.With().Str("component", "lease_keeper").Logger()}
}

// Hold registers a lease the cub took for the grant entry streamID;
// cancel is called if it is lost, or if it cannot be renewed in time. The
// fence it returns, given to the tool's run (tool.Spec.Fence), moves with
// every renewal.
func (k *LeaseKeeper) Hold(claimID, token, streamID string, cancel context.CancelCauseFunc) *tool.Fence {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := time.Now()
	f := tool.NewFence(k.watchdogDeadline(now))
	k.held[claimID] = heldLease{token: token, streamID: streamID, cancel: cancel, renewedAt: now, fence: f}
	return f
}

// Drop forgets a lease (the grant is done) and releases it in Redis.
func (k *LeaseKeeper) Drop(ctx context.Context, claimID string) {
	k.mu.Lock()
	l, ok := k.held[claimID]
	delete(k.held, claimID)
	k.mu.Unlock()
	if ok {
		if err := k.bb.ReleaseLease(ctx, claimID, k.cfg.Agent, l.token, k.cfg.Consumer); err != nil && ctx.Err() == nil {
			k.log.Debug().Err(err).Str("claim_id", claimID).Msg("releasing lease failed; it expires on its own")
		}
	}
}

// HandBack forgets a lease whose work the cub stops unfinished on purpose
// (its drain ran out of time) and gives the grant back: the orchestrator
// grants it again without counting an attempt. A lease already lost is
// not handed back (that grant is lost, and counts).
func (k *LeaseKeeper) HandBack(ctx context.Context, claimID string) {
	k.mu.Lock()
	l, ok := k.held[claimID]
	delete(k.held, claimID)
	k.mu.Unlock()
	if !ok {
		return
	}
	// The mark lives long enough for the orchestrator's lease check, which
	// comes one lease TTL after the grant's delivery at the latest.
	handed, err := k.bb.HandBackLease(ctx, claimID, k.cfg.Agent, l.token, k.cfg.Consumer, 10*k.cfg.LeaseTTL)
	switch {
	case err != nil:
		k.log.Warn().Err(err).Str("claim_id", claimID).Msg("handing the grant back failed; its lease expires on its own and the grant counts as lost")
	case handed:
		k.log.Info().Str("claim_id", claimID).Msg("grant handed back unfinished; it will be granted again without counting an attempt")
	}
}

// Forget stops renewing a lease that Redis already released (the result's
// script deletes it with the write).
func (k *LeaseKeeper) Forget(claimID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.held, claimID)
}

// Holding reports whether the cub holds a lease on claimID.
func (k *LeaseKeeper) Holding(claimID string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.held[claimID]
	return ok
}

// Held is the number of leases the cub holds (grants queued or running).
func (k *LeaseKeeper) Held() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.held)
}

// Alive reports whether the last heartbeat succeeded within the heartbeat
// TTL (for /readyz).
func (k *LeaseKeeper) Alive() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return time.Since(k.beatOK) < k.cfg.HeartbeatTTL
}

// Interval is the beat period: a third of the shorter TTL, so that two
// beats can fail before anything expires.
func (k *LeaseKeeper) Interval() time.Duration {
	ttl := k.cfg.HeartbeatTTL
	if k.cfg.LeaseTTL < ttl {
		ttl = k.cfg.LeaseTTL
	}
	return ttl / 3
}

// Run beats until ctx ends, then removes the heartbeat so the orchestrator
// stops asking this agent at once.
func (k *LeaseKeeper) Run(ctx context.Context) error {
	k.sender.start(ctx)
	t := time.NewTicker(k.Interval())
	defer t.Stop()
	for {
		k.Beat(ctx)
		select {
		case <-ctx.Done():
			_ = k.bb.Deregister(context.WithoutCancel(ctx), k.cfg.Agent)
			return nil
		case <-t.C:
		case <-k.poke:
		}
	}
}

// Poke asks for a beat now: a grant this cub holds was withdrawn (its
// workflow was cancelled), and the beat finds the lease gone and stops
// the tool without waiting for the next period.
func (k *LeaseKeeper) Poke() {
	select {
	case k.poke <- struct{}{}:
	default:
	}
}

// Beat renews the heartbeat and every held lease once.
func (k *LeaseKeeper) Beat(ctx context.Context) {
	k.mu.Lock()
	leases := make([]blackboard.Lease, 0, len(k.held))
	for id, l := range k.held {
		leases = append(leases, blackboard.Lease{ClaimID: id, Token: l.token, StreamID: l.streamID})
	}
	k.mu.Unlock()
	sent := time.Now()
	lost, err := k.heartbeat(ctx, leases)
	if err != nil {
		if ctx.Err() == nil {
			k.log.Warn().Err(err).Msg("heartbeat failed")
			k.fenceUnrenewed(time.Now())
		}
		return
	}
	k.mu.Lock()
	k.beatOK = time.Now()
	for id, h := range k.held {
		if h.renewedAt.Before(sent) {
			h.renewedAt = sent
			k.held[id] = h
			h.fence.Extend(k.watchdogDeadline(sent))
		}
	}
	var gone []heldLease
	var ids []string
	for _, l := range lost {
		if h, ok := k.held[l.ClaimID]; ok && h.token == l.Token {
			gone = append(gone, h)
			ids = append(ids, l.ClaimID)
			delete(k.held, l.ClaimID)
		}
	}
	k.mu.Unlock()
	for i, h := range gone {
		k.m.LeasesLost.Inc()
		k.log.Warn().Str("claim_id", ids[i]).Msg("work lease lost; abandoning the grant")
		h.cancel(errLeaseLost)
	}
}

// beatResult is what one heartbeat round trip answered.
type beatResult struct {
	lost []blackboard.Lease
	err  error
}

// heartbeat sends one beat and waits for it at most one period: a cub cut
// off from Redis must learn it while its leases still live (see
// fenceUnrenewed). The context alone does not bound the wait: go-redis
// keeps reading a connection until its own read timeout (3 s, then again
// on each retry) whatever the context's deadline, and on a dead network —
// packets dropped, no reset — that is longer than the fence's margin. So
// the keeper stops waiting at the deadline and leaves the call to end on
// its own (the next beat does not wait for it: see beatSender); should it
// land late, it renews nothing this cub has given up (a lease is extended
// only while it still holds this cub's token).
func (k *LeaseKeeper) heartbeat(ctx context.Context, leases []blackboard.Lease) ([]blackboard.Lease, error) {
	bctx, cancel := context.WithTimeout(ctx, k.Interval())
	defer cancel()
	done := make(chan beatResult, 1)
	k.sender.do(func() {
		lost, err := k.bb.Heartbeat(bctx, blackboard.HeartbeatParams{Agent: k.cfg.Agent, Consumer: k.cfg.Consumer,
			TTL: k.cfg.HeartbeatTTL, Leases: leases, LeaseTTL: k.cfg.LeaseTTL})
		done <- beatResult{lost: lost, err: err}
	})
	select {
	case r := <-done:
		return r.lost, r.err
	case <-bctx.Done():
		return nil, fmt.Errorf("cub: heartbeat unanswered after %v: %w", k.Interval(), bctx.Err())
	}
}

// fenceUnrenewed stops, at once, the work of every lease that went
// unrenewed for two thirds of the lease TTL (two beats failed in a row,
// e.g. the cub is cut off from Redis): its lease is about to expire and
// the orchestrator to grant the claim again, and the tool must be gone
// before a second copy can start. Redis may well still hold the lease; the
// cub gives it up anyway, which costs a re-run, never a double one.
func (k *LeaseKeeper) fenceUnrenewed(now time.Time) {
	limit := k.cfg.LeaseTTL * 2 / 3
	k.mu.Lock()
	var gone []heldLease
	var ids []string
	for id, h := range k.held {
		if now.Sub(h.renewedAt) >= limit {
			gone = append(gone, h)
			ids = append(ids, id)
			delete(k.held, id)
		}
	}
	k.mu.Unlock()
	for i, h := range gone {
		k.m.LeasesLost.Inc()
		k.log.Warn().Str("claim_id", ids[i]).Dur("unrenewed_for", now.Sub(h.renewedAt)).
			Msg("work lease could not be renewed before it expires; stopping the tool at once")
		h.cancel(tool.ErrStopNow)
	}
}

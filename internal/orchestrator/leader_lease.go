package orchestrator

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
)

// LeaderLease keeps this orchestrator's claim on leadership. Only the
// holder acts; every write it makes carries the epoch, so a leader that
// lost the lease (a long pause, a partition) has its late writes refused
// by the scripts instead of corrupting state.
//
// The lease is held as "<identity>#<boot>": identity names the
// orchestrator across restarts, boot this process. A process that starts
// with an identity takes the lease over at once from an earlier boot of
// the same identity (its own dead predecessor: two live processes never
// share an identity), so a restart does not stall the work for a TTL; a
// standby, with an identity of its own, still waits for the leader's lease
// to expire. The takeover happens only at the first answered attempt after
// start, so even two processes wrongly given the same identity cannot take
// the lease from each other back and forth: the later one leads, and every
// change of leader bumps the epoch.
//
// Safe for concurrent use.
type LeaderLease struct {
	bb       *blackboard.Client
	log      zerolog.Logger
	identity string // "" without a stable identity: no takeover
	id       string // identity#boot
	ttl      time.Duration
	epoch    atomic.Int64
}

// NewLeaderLease returns a lease for the orchestrator with the stable
// identity (empty: none, the process is named host-pid-random and waits
// for any earlier lease to expire).
func NewLeaderLease(bb *blackboard.Client, log zerolog.Logger, identity string, ttl time.Duration) *LeaderLease {
	boot := blackboard.NewID()[:12]
	id := identity + "#" + boot
	if identity == "" {
		host, _ := os.Hostname()
		id = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), boot)
	}
	return &LeaderLease{bb: bb, log: log.With().Str("component", "leader_lease").Logger(), identity: identity, id: id, ttl: ttl}
}

// ID is what the lease holds while this process leads: identity#boot.
func (l *LeaderLease) ID() string { return l.id }

// Epoch is the fencing token while leading, 0 otherwise.
func (l *LeaderLease) Epoch() int64 { return l.epoch.Load() }

// Lead blocks until this orchestrator holds the lease, then runs work with
// a context that is cancelled as soon as the lease is lost (renewal failed
// for longer than the TTL, or another orchestrator holds it). It returns
// when ctx ends; after losing the lease it goes back to waiting.
func (l *LeaderLease) Lead(ctx context.Context, work func(ctx context.Context, epoch int64)) error {
	interval := l.ttl / 3
	reclaim := l.identity != ""
	for ctx.Err() == nil {
		var lead blackboard.Leadership
		var err error
		if reclaim {
			lead, err = l.bb.ReclaimLeadership(ctx, l.id, l.identity, l.ttl)
		} else {
			lead, err = l.bb.AcquireLeadership(ctx, l.id, l.ttl)
		}
		if err == nil {
			reclaim = false
		}
		switch {
		case err != nil:
			if ctx.Err() == nil {
				l.log.Warn().Err(err).Msg("leader lease attempt failed")
			}
		case lead.Leading:
			// Returns when the lease is lost or the work gave up; either
			// way wait a beat before trying again.
			l.lead(ctx, lead, interval, work)
		default:
			l.log.Debug().Str("holder", lead.Holder).Msg("standing by: another orchestrator leads")
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
	// Hand over at once on a clean stop instead of making a standby wait
	// for the TTL.
	if l.epoch.Load() != 0 {
		_ = l.bb.Resign(context.WithoutCancel(ctx), l.id)
	}
	return nil
}

func (l *LeaderLease) lead(ctx context.Context, lead blackboard.Leadership, interval time.Duration, work func(context.Context, int64)) {
	l.epoch.Store(lead.Epoch)
	l.log.Info().Int64("epoch", lead.Epoch).Bool("reclaimed", lead.Reclaimed).Str("holder", l.id).Msg("leading")
	// leader_elected was appended by the acquiring script itself.
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		work(wctx, lead.Epoch)
	}()
	lastRenew := time.Now()
	for {
		select {
		case <-ctx.Done():
			cancel()
			<-done
			return
		case <-done:
			cancel()
			return
		case <-time.After(interval):
		}
		r, err := l.bb.AcquireLeadership(ctx, l.id, l.ttl)
		switch {
		case err == nil && r.Leading && r.Epoch == lead.Epoch:
			lastRenew = time.Now()
			continue
		case err != nil && time.Since(lastRenew) < l.ttl:
			l.log.Warn().Err(err).Msg("leader lease renewal failed; retrying")
			continue
		}
		l.log.Warn().Err(err).Str("holder", r.Holder).Msg("lost the leader lease; stopping work")
		l.epoch.Store(0)
		cancel()
		<-done
		return
	}
}

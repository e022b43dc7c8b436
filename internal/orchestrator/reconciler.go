package orchestrator

import (
	"context"
	"math"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
)

// Reconciler revisits every active claim: once when this orchestrator
// starts leading (bids that arrived, grants without results, expired
// leases and timers taken by a leader that died), and then periodically as
// a safety net. It walks the active-claims index with a cursor, a page at
// a time, on its own goroutine at a bounded rate (rate claims per second):
// the sweep never floods the workers that serve live events, whatever the
// number of active claims. Advancing is idempotent, so visiting a healthy
// claim only costs a read.
type Reconciler struct {
	bb       *blackboard.Client
	disp     *Dispatcher
	advancer *ClaimAdvancer
	every    time.Duration
	rate     int
	m        *Metrics
	log      zerolog.Logger
}

// ReconcilerParams is what NewReconciler wires together.
type ReconcilerParams struct {
	Client     *blackboard.Client
	Config     ReconcilerConfig
	Dispatcher *Dispatcher
	Advancer   *ClaimAdvancer
	Metrics    *Metrics
	// Log has no component; the reconciler adds its own.
	Log zerolog.Logger
}

// NewReconciler wires the reconciler.
func NewReconciler(p ReconcilerParams) *Reconciler {
	return &Reconciler{bb: p.Client, disp: p.Dispatcher, advancer: p.Advancer, every: p.Config.Every, rate: max(p.Config.Rate, 1), m: p.Metrics,
		log: p.Log.With().Str("component", "reconciler").Logger()}
}

// Run reconciles at once and then every period until ctx ends.
func (r *Reconciler) Run(ctx context.Context) error {
	for {
		if err := r.Once(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn().Err(err).Msg("reconcile failed; retrying next period")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(r.every):
		}
	}
}

// Once walks every active claim once, advancing each (with lease checks)
// at most rate per second.
func (r *Reconciler) Once(ctx context.Context) error {
	if n, err := r.bb.CountApprovals(ctx); err == nil {
		r.m.ApprovalsPending.Set(float64(n))
	}
	if c, err := r.bb.CountScheduler(ctx); err == nil {
		r.m.QueueDepth.Set(float64(c.Waiting))
	}
	if p, err := r.bb.GetPauseState(ctx); err == nil {
		r.m.Paused.Set(boolGauge(p.Paused))
	}
	r.observeTokens(ctx)
	tick := time.NewTicker(time.Second / time.Duration(r.rate))
	defer tick.Stop()
	page := int64(min(max(r.rate, 16), 512))
	from := math.Inf(-1)
	seen := map[string]bool{} // ids at score `from`, already visited
	visited := 0
	for {
		p, err := r.bb.ActiveClaimsFrom(ctx, from, page+int64(len(seen)))
		if err != nil {
			return err
		}
		fresh := 0
		for i, id := range p.IDs {
			if seen[id] {
				continue
			}
			fresh++
			if p.Scores[i] != from {
				from, seen = p.Scores[i], map[string]bool{}
			}
			seen[id] = true
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			if err := r.advancer.Advance(ctx, id, "", true); err != nil && ctx.Err() == nil {
				r.log.Warn().Err(err).Str("claim_id", id).Msg("reconciling claim failed")
			}
			visited++
		}
		if fresh == 0 {
			if visited > 0 {
				r.log.Debug().Int("claims", visited).Msg("reconciled active claims")
			}
			return nil
		}
	}
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

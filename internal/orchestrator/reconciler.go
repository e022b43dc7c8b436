package orchestrator

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/pkg/blackboard"
)

// Reconciler revisits every active claim: once when this orchestrator
// starts leading (bids that arrived, grants without results, expired
// leases and timers taken by a leader that died), and then periodically as
// a safety net. Advancing is idempotent, so visiting a healthy claim only
// costs a read.
type Reconciler struct {
	bb       *blackboard.Client
	disp     *Dispatcher
	advancer *ClaimAdvancer
	every    time.Duration
	m        *Metrics
	log      zerolog.Logger
}

// NewReconciler wires the reconciler.
func NewReconciler(bb *blackboard.Client, disp *Dispatcher, advancer *ClaimAdvancer, every time.Duration, m *Metrics, log zerolog.Logger) *Reconciler {
	return &Reconciler{bb: bb, disp: disp, advancer: advancer, every: every, m: m,
		log: log.With().Str("component", "reconciler").Logger()}
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

// Once advances every active claim (with lease checks).
func (r *Reconciler) Once(ctx context.Context) error {
	ids, err := r.bb.ActiveClaims(ctx)
	if err != nil {
		return err
	}
	if len(ids) > 0 {
		r.log.Debug().Int("claims", len(ids)).Msg("reconciling active claims")
	}
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
	for _, id := range ids {
		claimID := id
		r.disp.Submit(ctx, claimID, func(ctx context.Context) {
			if err := r.advancer.Advance(ctx, claimID, "", true); err != nil && ctx.Err() == nil {
				r.log.Warn().Err(err).Str("claim_id", claimID).Msg("reconciling claim failed")
			}
		})
	}
	return nil
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

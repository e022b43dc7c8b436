package orchestrator

import (
	"testing"
	"time"

	"github.com/settdev/sett/internal/config"
)

// TestHandBuiltConfigTakesTheConfigDefaults: a zero Config runs with
// internal/config's defaults; set fields and MaxReviewIterations 0
// (unlimited) stay.
func TestHandBuiltConfigTakesTheConfigDefaults(t *testing.T) {
	var cfg Config
	cfg.applyDefaults()
	if cfg.Claims.BidTimeout != config.DefaultBidTimeout.Std() || cfg.Advancer.NoBidTimeout != config.DefaultNoBidTimeout.Std() ||
		cfg.Claims.LeaseTTL != config.DefaultLeaseTTL.Std() || cfg.Advancer.MaxGrantAttempts != config.DefaultMaxGrantAttempts ||
		cfg.HeartbeatTTL != config.DefaultAgentHeartbeatTTL.Std() || cfg.LeaderTTL != config.DefaultLeaderTTL ||
		cfg.ClaimHandlers != config.DefaultWorkers || cfg.LivenessRefresh != config.DefaultLivenessRefresh ||
		cfg.Reconciler.Rate != config.DefaultReconcileRate || cfg.Events.DeadLetterAfter != config.DefaultDeadLetterAfter ||
		cfg.Reconciler.Every != config.DefaultReconcileEvery || cfg.Events.Sweep != config.DefaultReconcileEvery ||
		cfg.Advancer.MaxReviewIterations != 0 {
		t.Errorf("zero config after defaults: %+v", cfg)
	}
	kept := Config{Claims: ClaimConfig{BidTimeout: time.Hour}, ClaimHandlers: 2}
	kept.applyDefaults()
	if kept.Claims.BidTimeout != time.Hour || kept.ClaimHandlers != 2 {
		t.Errorf("set fields replaced: bid timeout %v, claim handlers %d", kept.Claims.BidTimeout, kept.ClaimHandlers)
	}
	if d := ConfigFrom(config.Default()); d.LeaderTTL != config.DefaultLeaderTTL || d.ClaimHandlers != config.DefaultWorkers {
		t.Errorf("ConfigFrom(config.Default()): leader ttl %v, claim handlers %d", d.LeaderTTL, d.ClaimHandlers)
	}
}

package orchestrator

import (
	"testing"
	"time"

	"github.com/settdev/sett/internal/config"
)

// TestHandBuiltSettingsTakeTheConfigDefaults: a zero Settings runs with
// internal/config's defaults; set fields and MaxReviewIterations 0
// (unlimited) stay.
func TestHandBuiltSettingsTakeTheConfigDefaults(t *testing.T) {
	var set Settings
	set.applyDefaults()
	if set.BidTimeout != config.DefaultBidTimeout.Std() || set.NoBidTimeout != config.DefaultNoBidTimeout.Std() ||
		set.LeaseTTL != config.DefaultLeaseTTL.Std() || set.MaxGrantAttempts != config.DefaultMaxGrantAttempts ||
		set.HeartbeatTTL != config.DefaultAgentHeartbeatTTL.Std() || set.LeaderTTL != config.DefaultLeaderTTL ||
		set.Workers != config.DefaultWorkers || set.LivenessRefresh != config.DefaultLivenessRefresh ||
		set.ReconcileRate != config.DefaultReconcileRate || set.DeadLetterAfter != config.DefaultDeadLetterAfter ||
		set.ReconcileEvery != config.DefaultReconcileEvery || set.MaxReviewIterations != 0 {
		t.Errorf("zero settings after defaults: %+v", set)
	}
	kept := Settings{BidTimeout: time.Hour, Workers: 2}
	kept.applyDefaults()
	if kept.BidTimeout != time.Hour || kept.Workers != 2 {
		t.Errorf("set fields replaced: bid timeout %v, workers %d", kept.BidTimeout, kept.Workers)
	}
	if d := SettingsFrom(config.Default()); d.LeaderTTL != config.DefaultLeaderTTL || d.Workers != config.DefaultWorkers {
		t.Errorf("SettingsFrom(config.Default()): leader ttl %v, workers %d", d.LeaderTTL, d.Workers)
	}
}

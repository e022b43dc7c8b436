package orchestratord

import (
	"context"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/metrics"
)

// vaultReporter makes the vault bridge's failures visible beyond the log:
// the metrics sett_vault_pass_failures_total and sett_vault_healthy, and
// the blackboard's vault health record (`sett status`, `sett errors`).
type vaultReporter struct {
	bb       *blackboard.Client
	path     string
	log      zerolog.Logger
	failures *metrics.Counter
	healthy  *metrics.Gauge
	// last is the previous pass's outcome: an unchanged good state is
	// written at most once a minute.
	lastOK   bool
	lastOKAt time.Time
}

func newVaultReporter(bb *blackboard.Client, path string, reg *metrics.Registry, log zerolog.Logger) *vaultReporter {
	return &vaultReporter{bb: bb, path: path, log: log,
		failures: reg.NewCounter(metrics.Subsystem("vault").Opts("pass_failures_total", "Vault passes that failed (a file or folder the orchestrator cannot read or write, most often).")),
		healthy:  reg.NewGauge(metrics.Subsystem("vault").Opts("healthy", "1 while the vault bridge's last pass succeeded, 0 while it fails.")),
	}
}

// report is the bridge's ReportFunc.
func (r *vaultReporter) report(ctx context.Context, err error) {
	now := time.Now()
	if err == nil {
		r.healthy.Set(1)
		if r.lastOK && now.Sub(r.lastOKAt) < time.Minute {
			return
		}
		r.lastOK, r.lastOKAt = true, now
	} else {
		r.healthy.Set(0)
		r.failures.Inc()
		r.lastOK = false
	}
	if rerr := r.bb.ReportVaultPass(ctx, r.path, now.UnixMilli(), err); rerr != nil && ctx.Err() == nil {
		r.log.Warn().Err(rerr).Msg("cannot record the vault's health on the blackboard")
	}
}

package cub

import "github.com/settdev/sett/internal/metrics"

// Metrics are the cub's Prometheus series; labels hold only small fixed
// sets, never claim or artefact ids.
type Metrics struct {
	Bids         *metrics.CounterVec   // bid
	Grants       *metrics.CounterVec   // kind: review|claim|exclusive|feedback
	GrantsQueued *metrics.Gauge        // grants leased but waiting for a worker slot
	ToolsRunning *metrics.Gauge        // tools running now
	ToolDuration *metrics.HistogramVec // outcome: ok|failure kind
	ToolExits    *metrics.CounterVec   // outcome
	StartLatency *metrics.Histogram    // grant read from the inbox → tool process started
	LeasesLost   *metrics.Counter
	Artefacts    *metrics.CounterVec // structural_type written
	WriteRetries *metrics.CounterVec // write: bid|grant|result
}

// NewMetrics creates and registers the series on reg (nil: unregistered).
func NewMetrics(reg *metrics.Registry) *Metrics {
	lat := []float64{.001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 600, 1800}
	m := &Metrics{
		Bids: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "cub",
			Name: "bids_total", Help: "Bids submitted, by bid."}, "bid"),
		Grants: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "cub",
			Name: "grants_total", Help: "Grants received and leased, by kind."}, "kind"),
		GrantsQueued: reg.NewGauge(metrics.Opts{Namespace: "sett", Subsystem: "cub",
			Name: "grants_queued", Help: "Leased grants waiting for a free worker slot."}),
		ToolsRunning: reg.NewGauge(metrics.Opts{Namespace: "sett", Subsystem: "cub",
			Name: "tools_running", Help: "Tool processes running now."}),
		ToolDuration: reg.NewHistogramVec(metrics.Opts{Namespace: "sett", Subsystem: "cub",
			Name: "tool_duration_seconds", Help: "Tool run time, by outcome."}, lat, "outcome"),
		ToolExits: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "cub",
			Name: "tool_runs_total", Help: "Tool runs, by outcome (ok or the failure kind)."}, "outcome"),
		StartLatency: reg.NewHistogram(metrics.Opts{Namespace: "sett", Subsystem: "cub",
			Name: "grant_to_start_seconds", Help: "Time from reading a grant to starting its tool."}, lat),
		LeasesLost: reg.NewCounter(metrics.Opts{Namespace: "sett", Subsystem: "cub",
			Name: "leases_lost_total", Help: "Work leases found lost while the grant was held."}),
		Artefacts: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "cub",
			Name: "artefacts_written_total", Help: "Artefacts written, by structural type."}, "structural_type"),
		WriteRetries: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "cub",
			Name: "write_retries_total", Help: "Failed Redis writes retried in place, by write."}, "write"),
	}
	return m
}

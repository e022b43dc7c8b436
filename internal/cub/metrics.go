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
	o := metrics.Subsystem("cub").Opts
	m := &Metrics{
		Bids:         reg.NewCounterVec(o("bids_total", "Bids submitted, by bid."), "bid"),
		Grants:       reg.NewCounterVec(o("grants_total", "Grants received and leased, by kind."), "kind"),
		GrantsQueued: reg.NewGauge(o("grants_queued", "Leased grants waiting for a free worker slot.")),
		ToolsRunning: reg.NewGauge(o("tools_running", "Tool processes running now.")),
		ToolDuration: reg.NewHistogramVec(o("tool_duration_seconds", "Tool run time, by outcome."), lat, "outcome"),
		ToolExits:    reg.NewCounterVec(o("tool_runs_total", "Tool runs, by outcome (ok or the failure kind)."), "outcome"),
		StartLatency: reg.NewHistogram(o("grant_to_start_seconds", "Time from reading a grant to starting its tool."), lat),
		LeasesLost:   reg.NewCounter(o("leases_lost_total", "Work leases found lost while the grant was held.")),
		Artefacts:    reg.NewCounterVec(o("artefacts_written_total", "Artefacts written, by structural type."), "structural_type"),
		WriteRetries: reg.NewCounterVec(o("write_retries_total", "Failed Redis writes retried in place, by write."), "write"),
	}
	return m
}

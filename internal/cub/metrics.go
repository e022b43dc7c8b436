package cub

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the cub's Prometheus series; labels hold only small fixed
// sets, never claim or artefact ids.
type Metrics struct {
	Bids         *prometheus.CounterVec   // bid
	Grants       *prometheus.CounterVec   // kind: review|claim|exclusive|feedback
	GrantsQueued prometheus.Gauge         // grants leased but waiting for a worker slot
	ToolsRunning prometheus.Gauge         // tools running now
	ToolDuration *prometheus.HistogramVec // outcome: ok|failure kind
	ToolExits    *prometheus.CounterVec   // outcome
	StartLatency prometheus.Histogram     // grant read from the inbox → tool process started
	LeasesLost   prometheus.Counter
	Artefacts    *prometheus.CounterVec // structural_type written
	WriteRetries *prometheus.CounterVec // write: bid|grant|result
}

// NewMetrics creates and registers the series on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	lat := []float64{.001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 600, 1800}
	m := &Metrics{
		Bids: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "cub",
			Name: "bids_total", Help: "Bids submitted, by bid."}, []string{"bid"}),
		Grants: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "cub",
			Name: "grants_total", Help: "Grants received and leased, by kind."}, []string{"kind"}),
		GrantsQueued: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "sett", Subsystem: "cub",
			Name: "grants_queued", Help: "Leased grants waiting for a free worker slot."}),
		ToolsRunning: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "sett", Subsystem: "cub",
			Name: "tools_running", Help: "Tool processes running now."}),
		ToolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "sett", Subsystem: "cub",
			Name: "tool_duration_seconds", Help: "Tool run time, by outcome.", Buckets: lat}, []string{"outcome"}),
		ToolExits: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "cub",
			Name: "tool_runs_total", Help: "Tool runs, by outcome (ok or the failure kind)."}, []string{"outcome"}),
		StartLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "sett", Subsystem: "cub",
			Name: "grant_to_start_seconds", Help: "Time from reading a grant to starting its tool.", Buckets: lat}),
		LeasesLost: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sett", Subsystem: "cub",
			Name: "leases_lost_total", Help: "Work leases found lost while the grant was held."}),
		Artefacts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "cub",
			Name: "artefacts_written_total", Help: "Artefacts written, by structural type."}, []string{"structural_type"}),
		WriteRetries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "cub",
			Name: "write_retries_total", Help: "Failed Redis writes retried in place, by write."}, []string{"write"}),
	}
	if reg != nil {
		reg.MustRegister(m.Bids, m.Grants, m.GrantsQueued, m.ToolsRunning, m.ToolDuration, m.ToolExits,
			m.StartLatency, m.LeasesLost, m.Artefacts, m.WriteRetries)
	}
	return m
}

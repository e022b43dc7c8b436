package orchestrator

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the orchestrator's Prometheus series. Labels only ever hold
// small fixed sets (outcomes, phases, bid values, event types), never claim
// or artefact ids.
type Metrics struct {
	ClaimsCreated      prometheus.Counter
	ClaimsFinished     *prometheus.CounterVec // outcome: complete|terminated
	Bids               *prometheus.CounterVec // bid (including timed-out ignores)
	BidTimeouts        prometheus.Counter
	Grants             *prometheus.CounterVec   // phase: review|parallel|exclusive|feedback
	ConsensusLatency   prometheus.Histogram     // claim created → first grant or completion
	PhaseLatency       *prometheus.HistogramVec // phase: grant → every granted agent delivered
	FeedbackIterations prometheus.Counter
	LeasesLost         prometheus.Counter
	WorkflowsEnded     *prometheus.CounterVec // status
	Events             *prometheus.CounterVec // type
	EventLag           prometheus.Histogram   // event appended → handled
	Leading            prometheus.Gauge
	ApprovalsRequested prometheus.Counter
	ApprovalsDecided   *prometheus.CounterVec // decision: approved|rejected|expired
	ApprovalsPending   prometheus.Gauge
	Learnings          *prometheus.CounterVec // source: learner|reason
	QueueWait          prometheus.Histogram   // claim waiting for a slot or a resume → granted
	QueueDepth         prometheus.Gauge
	Paused             prometheus.Gauge
	Retries            *prometheus.CounterVec // outcome: scheduled|granted|exhausted|permanent
	MemoryMerges       prometheus.Counter
	ReviewDecisions    *prometheus.CounterVec // outcome: proceed|rework|fail
	AgentTokens        *prometheus.GaugeVec   // agent (configured agents only)
	WorkflowTokens     *prometheus.GaugeVec   // status: running (tokens of running workflows)
}

// NewMetrics creates and registers the series on reg (nil: unregistered,
// for tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	lat := []float64{.001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900}
	m := &Metrics{
		ClaimsCreated: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "claims_created_total", Help: "Claims created (regular and feedback)."}),
		ClaimsFinished: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "claims_finished_total", Help: "Claims that reached a final status, by outcome."}, []string{"outcome"}),
		Bids: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "bids_total", Help: "Bids counted at consensus, by bid."}, []string{"bid"}),
		BidTimeouts: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "bid_timeouts_total", Help: "Agents that did not bid before bid_timeout (counted as ignore)."}),
		Grants: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "grants_total", Help: "Agents granted work, by phase."}, []string{"phase"}),
		ConsensusLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "consensus_seconds", Help: "Time from a claim's creation to its first grant (or completion without bids).", Buckets: lat}),
		PhaseLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "phase_seconds", Help: "Time from a phase's grant until every granted agent delivered, by phase.", Buckets: lat}, []string{"phase"}),
		FeedbackIterations: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "feedback_iterations_total", Help: "Feedback claims created after review rejections."}),
		LeasesLost: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "leases_lost_total", Help: "Grants whose work lease expired without a result."}),
		WorkflowsEnded: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "workflows_ended_total", Help: "Workflows that ended, by status."}, []string{"status"}),
		Events: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "events_total", Help: "Events read from the stream, by type."}, []string{"type"}),
		EventLag: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "event_lag_seconds", Help: "Time from an event's append to its handling.", Buckets: lat}),
		Leading: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "leading", Help: "1 while this orchestrator holds the leader lease."}),
		ApprovalsRequested: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "approvals_requested_total", Help: "Claims that started waiting for a human decision."}),
		ApprovalsDecided: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "approvals_decided_total", Help: "Approvals applied, by decision (approved, rejected, expired)."}, []string{"decision"}),
		ApprovalsPending: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "approvals_pending", Help: "Claims waiting for a human decision (as of the last reconcile)."}),
		Learnings: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "learnings_recorded_total", Help: "Learnings recorded from rejections, by source (learner, reason)."}, []string{"source"}),
		QueueWait: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "queue_wait_seconds", Help: "Time a claim waited for a scheduler slot or a resume before its grant.", Buckets: lat}),
		QueueDepth: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "queue_depth", Help: "Claims and agent grants waiting in the scheduler (as of the last reconcile)."}),
		Paused: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "paused", Help: "1 while the instance is paused (sett pause or .sett_stop)."}),
		Retries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "retries_total", Help: "Tool failures handled by the retry policy, by outcome (scheduled, granted, exhausted, permanent)."}, []string{"outcome"}),
		MemoryMerges: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "memory_merges_total", Help: "Merges of agents' memories into a workflow's shared memory."}),
		ReviewDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "review_decisions_total", Help: "Review phases decided by the review policy, by outcome."}, []string{"outcome"}),
		AgentTokens: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "agent_tokens", Help: "Model tokens (input plus output) each agent's results reported, across the instance (as of the last reconcile)."}, []string{"agent"}),
		WorkflowTokens: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "workflow_tokens", Help: "Model tokens the workflows have spent, summed by workflow status (running only; as of the last reconcile). Per-workflow figures: sett status, sett hoard."}, []string{"status"}),
	}
	if reg != nil {
		reg.MustRegister(m.ClaimsCreated, m.ClaimsFinished, m.Bids, m.BidTimeouts, m.Grants, m.ConsensusLatency,
			m.PhaseLatency, m.FeedbackIterations, m.LeasesLost, m.WorkflowsEnded, m.Events, m.EventLag, m.Leading,
			m.ApprovalsRequested, m.ApprovalsDecided, m.ApprovalsPending, m.Learnings,
			m.QueueWait, m.QueueDepth, m.Paused, m.Retries, m.MemoryMerges, m.ReviewDecisions,
			m.AgentTokens, m.WorkflowTokens)
	}
	return m
}

package orchestrator

import "github.com/settdev/sett/internal/metrics"

// Metrics are the orchestrator's Prometheus series. Labels only ever hold
// small fixed sets (outcomes, phases, bid values, event types), never claim
// or artefact ids.
type Metrics struct {
	ClaimsCreated      *metrics.Counter
	ClaimsFinished     *metrics.CounterVec // outcome: complete|terminated
	Bids               *metrics.CounterVec // bid (including timed-out ignores)
	BidTimeouts        *metrics.Counter
	BidRounds          *metrics.Counter      // rounds of bid requests sent again
	NoAnswer           *metrics.Counter      // claims failed: needed agents never answered
	DeadEnds           *metrics.CounterVec   // kind: no_consumer|declined
	Grants             *metrics.CounterVec   // phase: review|parallel|exclusive|feedback
	ConsensusLatency   *metrics.Histogram    // claim created → first grant or completion
	PhaseLatency       *metrics.HistogramVec // phase: grant → every granted agent delivered
	FeedbackIterations *metrics.Counter
	LeasesLost         *metrics.Counter
	GrantsHandedBack   *metrics.Counter
	WorkflowsEnded     *metrics.CounterVec // status
	Events             *metrics.CounterVec // type
	EventLag           *metrics.Histogram  // event appended → handled
	Leading            *metrics.Gauge
	ApprovalsRequested *metrics.Counter
	ApprovalsDecided   *metrics.CounterVec // decision: approved|rejected|expired
	ApprovalsPending   *metrics.Gauge
	Learnings          *metrics.CounterVec // source: learner|reason
	QueueWait          *metrics.Histogram  // claim waiting for a slot or a resume → granted
	QueueDepth         *metrics.Gauge
	Paused             *metrics.Gauge
	Retries            *metrics.CounterVec // outcome: scheduled|granted|exhausted|permanent
	MemoryMerges       *metrics.Counter
	ReviewDecisions    *metrics.CounterVec // outcome: proceed|rework|fail
	AgentTokens        *metrics.GaugeVec   // agent (configured agents only)
	WorkflowTokens     *metrics.GaugeVec   // status: running (tokens of running workflows)
}

// NewMetrics creates and registers the series on reg (nil: unregistered,
// for tests).
func NewMetrics(reg *metrics.Registry) *Metrics {
	lat := []float64{.001, .002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900}
	m := &Metrics{
		ClaimsCreated: reg.NewCounter(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "claims_created_total", Help: "Claims created (regular and feedback)."}),
		ClaimsFinished: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "claims_finished_total", Help: "Claims that reached a final status, by outcome."}, "outcome"),
		Bids: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "bids_total", Help: "Bids counted at a consensus the orchestrator decided, by bid (a grant made by the last bid's own script is not counted here)."}, "bid"),
		BidTimeouts: reg.NewCounter(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "bid_timeouts_total", Help: "Agents that did not bid before bid_timeout (counted as ignore)."}),
		BidRounds: reg.NewCounter(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "bid_rounds_total", Help: "Rounds of bid requests sent again because configured agents whose answer a claim needs had not answered."}),
		NoAnswer: reg.NewCounter(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "claims_no_answer_total", Help: "Claims failed because configured agents whose answer they needed never answered within no_bid_timeout."}),
		DeadEnds: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "chain_ends_total", Help: "Claims ended without work by configuration, by kind (no_consumer: no configured agent consumes the type; declined: every consumer answered ignore)."}, "kind"),
		Grants: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "grants_total", Help: "Agents granted work by the orchestrator, by phase (grants made by the last bid's own script: sett_cub_grants_total)."}, "phase"),
		ConsensusLatency: reg.NewHistogram(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "consensus_seconds", Help: "Time from a claim's creation to its first grant by the orchestrator (or completion without bids)."}, lat),
		PhaseLatency: reg.NewHistogramVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "phase_seconds", Help: "Time from a phase's grant until every granted agent delivered, by phase."}, lat, "phase"),
		FeedbackIterations: reg.NewCounter(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "feedback_iterations_total", Help: "Feedback claims created after review rejections."}),
		LeasesLost: reg.NewCounter(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "leases_lost_total", Help: "Grants whose work lease expired without a result."}),
		GrantsHandedBack: reg.NewCounter(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "grants_handed_back_total", Help: "Grants draining cubs gave back unfinished, granted again without counting an attempt."}),
		WorkflowsEnded: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "workflows_ended_total", Help: "Workflows that ended, by status."}, "status"),
		Events: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "events_total", Help: "Events read from the stream, by type."}, "type"),
		EventLag: reg.NewHistogram(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "event_lag_seconds", Help: "Time from an event's append to its handling."}, lat),
		Leading: reg.NewGauge(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "leading", Help: "1 while this orchestrator holds the leader lease."}),
		ApprovalsRequested: reg.NewCounter(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "approvals_requested_total", Help: "Claims that started waiting for a human decision."}),
		ApprovalsDecided: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "approvals_decided_total", Help: "Approvals applied, by decision (approved, rejected, expired)."}, "decision"),
		ApprovalsPending: reg.NewGauge(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "approvals_pending", Help: "Claims waiting for a human decision (as of the last reconcile)."}),
		Learnings: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "learnings_recorded_total", Help: "Learnings recorded from rejections, by source (learner, reason)."}, "source"),
		QueueWait: reg.NewHistogram(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "queue_wait_seconds", Help: "Time a claim waited for a scheduler slot or a resume before its grant."}, lat),
		QueueDepth: reg.NewGauge(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "queue_depth", Help: "Claims and agent grants waiting in the scheduler (as of the last reconcile)."}),
		Paused: reg.NewGauge(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "paused", Help: "1 while the instance is paused (sett pause or .sett_stop)."}),
		Retries: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "retries_total", Help: "Tool failures handled by the retry policy, by outcome (scheduled, granted, exhausted, permanent)."}, "outcome"),
		MemoryMerges: reg.NewCounter(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "memory_merges_total", Help: "Merges of agents' memories into a workflow's shared memory."}),
		ReviewDecisions: reg.NewCounterVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "review_decisions_total", Help: "Review phases decided by the review policy, by outcome."}, "outcome"),
		AgentTokens: reg.NewGaugeVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "agent_tokens", Help: "Model tokens (input plus output) each agent's results reported, across the instance (as of the last reconcile)."}, "agent"),
		WorkflowTokens: reg.NewGaugeVec(metrics.Opts{Namespace: "sett", Subsystem: "orchestrator",
			Name: "workflow_tokens", Help: "Model tokens the workflows have spent, summed by workflow status (running only; as of the last reconcile). Per-workflow figures: sett status, sett hoard."}, "status"),
	}
	return m
}

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
	o := metrics.Subsystem("orchestrator").Opts
	m := &Metrics{
		ClaimsCreated:      reg.NewCounter(o("claims_created_total", "Claims created (regular and feedback).")),
		ClaimsFinished:     reg.NewCounterVec(o("claims_finished_total", "Claims that reached a final status, by outcome."), "outcome"),
		Bids:               reg.NewCounterVec(o("bids_total", "Bids counted at a consensus the orchestrator decided, by bid (a grant made by the last bid's own script is not counted here)."), "bid"),
		BidTimeouts:        reg.NewCounter(o("bid_timeouts_total", "Agents that did not bid before bid_timeout (counted as ignore).")),
		BidRounds:          reg.NewCounter(o("bid_rounds_total", "Rounds of bid requests sent again because configured agents whose answer a claim needs had not answered.")),
		NoAnswer:           reg.NewCounter(o("claims_no_answer_total", "Claims failed because configured agents whose answer they needed never answered within no_bid_timeout.")),
		DeadEnds:           reg.NewCounterVec(o("chain_ends_total", "Claims ended without work by configuration, by kind (no_consumer: no configured agent consumes the type; declined: every consumer answered ignore)."), "kind"),
		Grants:             reg.NewCounterVec(o("grants_total", "Agents granted work by the orchestrator, by phase (grants made by the last bid's own script: sett_cub_grants_total)."), "phase"),
		ConsensusLatency:   reg.NewHistogram(o("consensus_seconds", "Time from a claim's creation to its first grant by the orchestrator (or completion without bids)."), lat),
		PhaseLatency:       reg.NewHistogramVec(o("phase_seconds", "Time from a phase's grant until every granted agent delivered, by phase."), lat, "phase"),
		FeedbackIterations: reg.NewCounter(o("feedback_iterations_total", "Feedback claims created after review rejections.")),
		LeasesLost:         reg.NewCounter(o("leases_lost_total", "Grants whose work lease expired without a result.")),
		GrantsHandedBack:   reg.NewCounter(o("grants_handed_back_total", "Grants draining cubs gave back unfinished, granted again without counting an attempt.")),
		WorkflowsEnded:     reg.NewCounterVec(o("workflows_ended_total", "Workflows that ended, by status."), "status"),
		Events:             reg.NewCounterVec(o("events_total", "Events read from the stream, by type."), "type"),
		EventLag:           reg.NewHistogram(o("event_lag_seconds", "Time from an event's append to its handling."), lat),
		Leading:            reg.NewGauge(o("leading", "1 while this orchestrator holds the leader lease.")),
		ApprovalsRequested: reg.NewCounter(o("approvals_requested_total", "Claims that started waiting for a human decision.")),
		ApprovalsDecided:   reg.NewCounterVec(o("approvals_decided_total", "Approvals applied, by decision (approved, rejected, expired)."), "decision"),
		ApprovalsPending:   reg.NewGauge(o("approvals_pending", "Claims waiting for a human decision (as of the last reconcile).")),
		Learnings:          reg.NewCounterVec(o("learnings_recorded_total", "Learnings recorded from rejections, by source (learner, reason)."), "source"),
		QueueWait:          reg.NewHistogram(o("queue_wait_seconds", "Time a claim waited for a scheduler slot or a resume before its grant."), lat),
		QueueDepth:         reg.NewGauge(o("queue_depth", "Claims and agent grants waiting in the scheduler (as of the last reconcile).")),
		Paused:             reg.NewGauge(o("paused", "1 while the instance is paused (sett pause or .sett_stop).")),
		Retries:            reg.NewCounterVec(o("retries_total", "Tool failures handled by the retry policy, by outcome (scheduled, granted, exhausted, permanent)."), "outcome"),
		MemoryMerges:       reg.NewCounter(o("memory_merges_total", "Merges of agents' memories into a workflow's shared memory.")),
		ReviewDecisions:    reg.NewCounterVec(o("review_decisions_total", "Review phases decided by the review policy, by outcome."), "outcome"),
		AgentTokens:        reg.NewGaugeVec(o("agent_tokens", "Model tokens (input plus output) each agent's results reported, across the instance (as of the last reconcile)."), "agent"),
		WorkflowTokens:     reg.NewGaugeVec(o("workflow_tokens", "Model tokens the workflows have spent, summed by workflow status (running only; as of the last reconcile). Per-workflow figures: sett status, sett hoard."), "status"),
	}
	return m
}

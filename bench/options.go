package bench

import (
	"io"
	"time"

	"github.com/settdev/sett/internal/config"
)

// Options set the sample counts and durations of a run. The zero value of
// a field means its default (DefaultOptions); SmokeOptions are tiny counts
// for TestSmoke.
type Options struct {
	// HopSamples is the number of timed hops per hop scenario (1 and 5
	// agents), after HopWarmup untimed ones. Default 300 and 10.
	HopSamples int `json:"hop_samples"`
	HopWarmup  int `json:"hop_warmup"`
	// EndToEndSamples is the number of goal → review → exclusive
	// workflows timed. Default 150.
	EndToEndSamples int `json:"end_to_end_samples"`
	// ThroughputGoals goals are posted at once, ThroughputRounds times.
	// Default 200 and 6 (benchstat needs 6 samples for an interval).
	ThroughputGoals  int `json:"throughput_goals"`
	ThroughputRounds int `json:"throughput_rounds"`
	// ThroughputMaxConcurrent is the max_concurrent of the throughput
	// agent: how many no-op tools its cub runs at once. Default 8.
	ThroughputMaxConcurrent int `json:"throughput_max_concurrent"`
	// FeedbackSamples is the number of workflows whose version 1 is
	// rejected by three reviewers. Default 60.
	FeedbackSamples int `json:"feedback_samples"`
	// ContextSamples is the number of in-process context chain builds per
	// chain shape. Default 2000.
	ContextSamples int `json:"context_samples"`
	// HoardArtefacts are seeded before HoardSamples listings and short-id
	// resolutions are timed. Default 100000 and 1000.
	HoardArtefacts int `json:"hoard_artefacts"`
	HoardSamples   int `json:"hoard_samples"`
	// ConsoleWorkflows are seeded before ConsoleSamples timed pages of the
	// web console (each: a 500-artefact workflow page, the list page and a
	// filtered list page); ConsoleClients browsers are on the live list
	// while the console step's hops are timed. Default 100000, 200, 50.
	ConsoleWorkflows int `json:"console_workflows"`
	ConsoleSamples   int `json:"console_samples"`
	ConsoleClients   int `json:"console_clients"`
	// IdleWindow is how long idle RSS and CPU are observed. Default 30s.
	IdleWindow time.Duration `json:"idle_window"`
	// LongIdle is how long the second idle stack has been idle when its
	// RSS and CPU are read, at the end of the run. Default 150s: past the
	// Go runtime's forced collection (every 2 minutes) and the daemons'
	// slower periodic work, which map back pages the start-up release
	// gave up, so the reading is the steady state, not the low point
	// right after start-up.
	LongIdle time.Duration `json:"long_idle"`
	// RoundTripBatches batches of RoundTripBatchClaims claims each are
	// counted per round-trip scenario. Default 10 and 20.
	RoundTripBatches     int `json:"round_trip_batches"`
	RoundTripBatchClaims int `json:"round_trip_batch_claims"`
	// LLMAgentSamples is the number of timed runs of the LLM agent against
	// the in-process fake provider, after HopWarmup untimed ones. Default
	// 200.
	LLMAgentSamples int `json:"llm_agent_samples"`
	// RecoverySamples is the number of times the orchestrator is killed
	// with SIGKILL and restarted. Default 10.
	RecoverySamples int `json:"recovery_samples"`
	// VaultSamples is the number of timed task files (and decisions) of
	// the vault scenario, after HopWarmup untimed ones. Default 100.
	VaultSamples int `json:"vault_samples"`
	// VaultSettleSamples is the number of timed task files read with the
	// settle period VaultSettle (default vault.settle's, 2s), after one
	// untimed one; each takes the period. Default 20.
	VaultSettleSamples int           `json:"vault_settle_samples"`
	VaultSettle        time.Duration `json:"vault_settle"`
	// RetentionWorkflows is the number of finished workflows the
	// retention scenario measures memory over, with retention off and
	// on. Default 10000.
	RetentionWorkflows int `json:"retention_workflows"`
	// TopologyHopSamples is the number of timed 1-agent hops against each
	// production topology (a 3-master Redis Cluster, a TLS-only node),
	// after HopWarmup untimed ones; TopologyThroughputRounds the number of
	// throughput rounds (of ThroughputGoals goals) against each. Default
	// 300 and 6, as on the single plaintext node they are compared with.
	TopologyHopSamples       int `json:"topology_hop_samples"`
	TopologyThroughputRounds int `json:"topology_throughput_rounds"`
	// ScaleInFlight are the numbers of workflows parked (on approvals)
	// while a fresh goal is timed, in increasing order; ScaleAgents the
	// numbers of agents alive. At each level: ScaleHops hops (or what fits
	// in 8 s) and one throughput round of ScaleGoals goals. Default
	// 10/1000/10000, 1/10/100, 100 and 200.
	ScaleInFlight []int `json:"scale_in_flight"`
	ScaleAgents   []int `json:"scale_agents"`
	ScaleHops     int   `json:"scale_hops"`
	ScaleGoals    int   `json:"scale_goals"`
	// ScaleRestartClaims claims wait in the scheduler (for a
	// max_concurrent_claims slot) when the orchestrator is killed and
	// started again. Default 10000.
	ScaleRestartClaims int `json:"scale_restart_claims"`
	// ScaleReadWorkflows workflows (parked on approvals) and
	// ScaleReadArtefacts artefacts are seeded before `sett status`, the
	// hoard's first page and the watch catch-up are timed
	// ScaleReadSamples times each. Default 10000, 200000 and 5.
	ScaleReadWorkflows int `json:"scale_read_workflows"`
	ScaleReadArtefacts int `json:"scale_read_artefacts"`
	ScaleReadSamples   int `json:"scale_read_samples"`
	// AsynqSamples sequential tasks are timed on asynq with a 1 ms poll
	// interval, AsynqDefaultSamples with its default configuration (about
	// a second each). Default 300 and 8.
	AsynqSamples        int `json:"asynq_samples"`
	AsynqDefaultSamples int `json:"asynq_default_samples"`
	// WorkDir holds binaries, configurations, Redis data and process
	// logs; empty means a new temporary directory, removed afterwards
	// unless KeepWorkDir.
	WorkDir     string `json:"-"`
	KeepWorkDir bool   `json:"-"`
	// RepoRoot is the module root to build from; empty means found from
	// the working directory.
	RepoRoot string `json:"-"`
	// Only names the steps to run (Steps lists them); empty runs all.
	// A partial run is for profiling one scenario, not for the record.
	Only []string `json:"only,omitempty"`
	// Progress receives one line per step; nil discards them.
	Progress io.Writer `json:"-"`
}

// DefaultOptions are the counts of `make bench`: about four minutes on a
// 2-core machine.
func DefaultOptions() Options {
	return Options{
		HopSamples: 300, HopWarmup: 10,
		EndToEndSamples: 150,
		ThroughputGoals: 200, ThroughputRounds: 6, ThroughputMaxConcurrent: 8,
		FeedbackSamples: 60,
		ContextSamples:  2000,
		HoardArtefacts:  100000, HoardSamples: 1000,
		ConsoleWorkflows: 100000, ConsoleSamples: 200, ConsoleClients: 50,
		IdleWindow:       30 * time.Second,
		LongIdle:         150 * time.Second,
		RoundTripBatches: 10, RoundTripBatchClaims: 20,
		LLMAgentSamples:    200,
		RecoverySamples:    10,
		VaultSamples:       100,
		VaultSettleSamples: 20, VaultSettle: time.Duration(config.DefaultVaultSettle),
		RetentionWorkflows: 10000,
		TopologyHopSamples: 300, TopologyThroughputRounds: 6,
		ScaleInFlight: []int{10, 1000, 10000}, ScaleAgents: []int{1, 10, 100}, ScaleHops: 100, ScaleGoals: 200,
		ScaleRestartClaims: 10000,
		ScaleReadWorkflows: 10000, ScaleReadArtefacts: 200000, ScaleReadSamples: 5,
		AsynqSamples: 300, AsynqDefaultSamples: 8,
	}
}

// SmokeOptions are tiny counts that exercise every scenario in a few
// seconds; their figures mean nothing.
func SmokeOptions() Options {
	return Options{
		HopSamples: 3, HopWarmup: 1,
		EndToEndSamples: 2,
		ThroughputGoals: 6, ThroughputRounds: 1, ThroughputMaxConcurrent: 4,
		FeedbackSamples: 2,
		ContextSamples:  10,
		HoardArtefacts:  300, HoardSamples: 10,
		ConsoleWorkflows: 300, ConsoleSamples: 3, ConsoleClients: 5,
		IdleWindow:       time.Second,
		LongIdle:         2 * time.Second,
		RoundTripBatches: 2, RoundTripBatchClaims: 2,
		LLMAgentSamples:    3,
		RecoverySamples:    2,
		VaultSamples:       3,
		VaultSettleSamples: 2, VaultSettle: 300 * time.Millisecond,
		// Enough finished workflows that what retention frees (≈7.6 KB
		// each) outweighs allocator noise (tens of KB): with 20 the
		// on/off comparison of TestRetentionScenario was a coin toss.
		RetentionWorkflows: 200,
		TopologyHopSamples: 3, TopologyThroughputRounds: 1,
		ScaleInFlight: []int{2, 20}, ScaleAgents: []int{1, 3}, ScaleHops: 3, ScaleGoals: 6,
		ScaleRestartClaims: 20,
		ScaleReadWorkflows: 20, ScaleReadArtefacts: 200, ScaleReadSamples: 2,
		AsynqSamples: 3, AsynqDefaultSamples: 1,
	}
}

// withDefaults fills every zero field from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&o.HopSamples, d.HopSamples)
	set(&o.HopWarmup, d.HopWarmup)
	set(&o.EndToEndSamples, d.EndToEndSamples)
	set(&o.ThroughputGoals, d.ThroughputGoals)
	set(&o.ThroughputRounds, d.ThroughputRounds)
	set(&o.ThroughputMaxConcurrent, d.ThroughputMaxConcurrent)
	set(&o.FeedbackSamples, d.FeedbackSamples)
	set(&o.ContextSamples, d.ContextSamples)
	set(&o.HoardArtefacts, d.HoardArtefacts)
	set(&o.HoardSamples, d.HoardSamples)
	set(&o.ConsoleWorkflows, d.ConsoleWorkflows)
	set(&o.ConsoleSamples, d.ConsoleSamples)
	set(&o.ConsoleClients, d.ConsoleClients)
	set(&o.RoundTripBatches, d.RoundTripBatches)
	set(&o.RoundTripBatchClaims, d.RoundTripBatchClaims)
	set(&o.LLMAgentSamples, d.LLMAgentSamples)
	set(&o.RecoverySamples, d.RecoverySamples)
	set(&o.VaultSamples, d.VaultSamples)
	set(&o.VaultSettleSamples, d.VaultSettleSamples)
	if o.VaultSettle <= 0 {
		o.VaultSettle = d.VaultSettle
	}
	set(&o.RetentionWorkflows, d.RetentionWorkflows)
	set(&o.TopologyHopSamples, d.TopologyHopSamples)
	set(&o.TopologyThroughputRounds, d.TopologyThroughputRounds)
	set(&o.AsynqSamples, d.AsynqSamples)
	set(&o.AsynqDefaultSamples, d.AsynqDefaultSamples)
	set(&o.ScaleHops, d.ScaleHops)
	set(&o.ScaleGoals, d.ScaleGoals)
	set(&o.ScaleRestartClaims, d.ScaleRestartClaims)
	set(&o.ScaleReadWorkflows, d.ScaleReadWorkflows)
	set(&o.ScaleReadArtefacts, d.ScaleReadArtefacts)
	set(&o.ScaleReadSamples, d.ScaleReadSamples)
	if len(o.ScaleInFlight) == 0 {
		o.ScaleInFlight = d.ScaleInFlight
	}
	if len(o.ScaleAgents) == 0 {
		o.ScaleAgents = d.ScaleAgents
	}
	if o.IdleWindow <= 0 {
		o.IdleWindow = d.IdleWindow
	}
	if o.LongIdle <= 0 {
		o.LongIdle = d.LongIdle
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

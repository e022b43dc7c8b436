package config

import "time"

// CurrentVersion is the only file format version this package reads.
const CurrentVersion = "1.0"

// Defaults, applied by ApplyDefaults. sett.yml.example documents each one
// next to its key.
const (
	DefaultMaxReviewIterations  = 3
	DefaultBidTimeout           = Duration(5 * time.Second)
	DefaultNoBidTimeout         = Duration(5 * time.Minute)
	DefaultLeaseTTL             = Duration(30 * time.Second)
	DefaultMaxGrantAttempts     = 2
	DefaultDeadLetterAfter      = 5
	DefaultReconcileRate        = 50
	DefaultMaxWorkflowArtefacts = 500
	DefaultMaxChainDepth        = 25
	DefaultMaxPayloadBytes      = 1 * MiB
	DefaultAgentHeartbeatTTL    = Duration(10 * time.Second)
	DefaultDecideRuleBids       = true
	DefaultHTTPAddr             = ":8080"

	DefaultBiddingStrategy  = BidExclusive
	DefaultBidScriptTimeout = Duration(5 * time.Second)
	DefaultWorkspaceMode    = WorkspaceReadOnly
	DefaultAgentTimeout     = Duration(10 * time.Minute)
	DefaultStopGrace        = Duration(10 * time.Second)
	DefaultMaxConcurrent    = 1
	DefaultMaxOutputBytes   = 4 * MiB

	DefaultRedisImage = "sett-redis:local"
)

// Defaults of the services' tunables that sett.yml has no key for (some
// are daemon flags). They live here with the others so that every
// default is written once.
const (
	// DefaultLeaderTTL is the orchestrator's leader lease TTL (the
	// orchestrator daemon's --leader-ttl).
	DefaultLeaderTTL = 10 * time.Second
	// DefaultWorkers is the number of the orchestrator's concurrent
	// claim handlers.
	DefaultWorkers = 16
	// DefaultLivenessRefresh is how often the orchestrator re-reads agent
	// heartbeats.
	DefaultLivenessRefresh = 5 * time.Second
	// DefaultReconcileEvery is the period of the orchestrator's
	// safety-net sweep over active claims and unacknowledged events.
	DefaultReconcileEvery = 30 * time.Second
	// DefaultContextDepth bounds the context chain a cub builds for a
	// tool (levels of sources).
	DefaultContextDepth = 10
)

// Default returns a Config with the current version and every default
// applied, and no agents. It does not pass Validate until an agent is
// added; it is meant for code paths that need settings without a file,
// such as tests.
func Default() *Config {
	c := &Config{Version: CurrentVersion, Agents: map[string]AgentConfig{}}
	c.ApplyDefaults()
	return c
}

// ApplyDefaults fills in every default, in this one place. It is
// idempotent, and Parse and Load call it before Validate.
//
// Empty strings always take their default (an agent's role becomes its
// name). A numeric, duration or size field takes its default when it is
// zero, unless the file wrote that zero explicitly: then the zero stays and
// Validate judges it, so that "timeout: 0s" is reported rather than
// silently replaced. MaxReviewIterations takes its default only when nil,
// because 0 means unlimited. Version is never defaulted: a file must say
// which format it is written in.
func (c *Config) ApplyDefaults() {
	o := &c.Orchestrator
	if o.MaxReviewIterations == nil {
		n := DefaultMaxReviewIterations
		o.MaxReviewIterations = &n
	}
	setDefault(c, &o.BidTimeout, DefaultBidTimeout, "orchestrator.bid_timeout")
	setDefault(c, &o.NoBidTimeout, DefaultNoBidTimeout, "orchestrator.no_bid_timeout")
	setDefault(c, &o.LeaseTTL, DefaultLeaseTTL, "orchestrator.lease_ttl")
	setDefault(c, &o.MaxGrantAttempts, DefaultMaxGrantAttempts, "orchestrator.max_grant_attempts")
	setDefault(c, &o.DeadLetterAfter, DefaultDeadLetterAfter, "orchestrator.dead_letter_after")
	setDefault(c, &o.ReconcileRate, DefaultReconcileRate, "orchestrator.reconcile_rate")
	setDefault(c, &o.MaxWorkflowArtefacts, DefaultMaxWorkflowArtefacts, "orchestrator.max_workflow_artefacts")
	setDefault(c, &o.MaxChainDepth, DefaultMaxChainDepth, "orchestrator.max_chain_depth")
	setDefault(c, &o.MaxPayloadBytes, DefaultMaxPayloadBytes, "orchestrator.max_payload_bytes")
	setDefault(c, &o.AgentHeartbeatTTL, DefaultAgentHeartbeatTTL, "orchestrator.agent_heartbeat_ttl")
	setDefault(c, &o.DecideRuleBids, DefaultDecideRuleBids, "orchestrator.decide_rule_bids")
	if o.HTTPAddr == "" {
		o.HTTPAddr = DefaultHTTPAddr
	}
	o.ReviewPolicy.applyDefaults(c, "orchestrator.review_policy")
	for name, r := range o.ReviewClusters {
		if r != nil {
			r.applyDefaults(c, "orchestrator.review_clusters."+name)
		}
	}
	o.Priority.applyDefaults(c, "orchestrator.priority")

	for name, a := range c.Agents {
		p := "agents." + name
		a.Name = name
		if a.Role == "" {
			a.Role = name
		}
		if a.BiddingStrategy == "" {
			a.BiddingStrategy = DefaultBiddingStrategy
		}
		if a.Workspace.Mode == "" {
			a.Workspace.Mode = DefaultWorkspaceMode
		}
		setDefault(c, &a.BidScriptTimeout, DefaultBidScriptTimeout, p+".bid_script_timeout")
		setDefault(c, &a.Timeout, DefaultAgentTimeout, p+".timeout")
		setDefault(c, &a.StopGrace, DefaultStopGrace, p+".stop_grace")
		setDefault(c, &a.MaxConcurrent, DefaultMaxConcurrent, p+".max_concurrent")
		setDefault(c, &a.MaxOutputBytes, DefaultMaxOutputBytes, p+".max_output_bytes")
		a.Retry.applyDefaults(c, p+".retry")
		a.applyWorkerDefaults(c, p)
		c.Agents[name] = a
	}

	c.Approvals.applyDefaults(c)
	c.Escalation.applyDefaults(c)
	c.Vault.applyDefaults(c)
	c.Retention.applyDefaults(c)
	c.applyIsolationDefaults()

	if c.Services.Redis.Image == "" {
		c.Services.Redis.Image = DefaultRedisImage
	}
	c.Services.Redis.applyDefaults(c, "services.redis")
}

// setDefault sets *v to def when it is zero and the file did not write it.
func setDefault[T comparable](c *Config, v *T, def T, path string) {
	var zero T
	if *v == zero && !c.src.isSet(path) {
		*v = def
	}
}

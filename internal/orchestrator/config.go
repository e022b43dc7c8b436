package orchestrator

import (
	"context"
	"time"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/escalation"
	"github.com/settdev/sett/internal/retrypolicy"
	"github.com/settdev/sett/internal/reviewpolicy"
)

// Config is the whole orchestrator's configuration, with defaults already
// applied: the one value the daemon builds (ConfigFrom) and hands to New.
// It stays one struct because the leader builds its services afresh at
// every leadership and needs each one's part; each service receives only
// its own part (ClaimConfig, AdvancerConfig, CreatorConfig,
// EventLoopConfig, ReconcilerConfig), never the whole.
type Config struct {
	Claims     ClaimConfig
	Advancer   AdvancerConfig
	Creator    CreatorConfig
	Events     EventLoopConfig
	Reconciler ReconcilerConfig
	// Agents are the configured agents, name → role (the agent
	// directory).
	Agents map[string]string
	// LivenessRefresh is how often agent heartbeats are re-read
	// (config.DefaultLivenessRefresh). A registering agent triggers a read at once, so this only
	// bounds how long a dead agent is still asked to bid (its bids then
	// time out).
	LivenessRefresh time.Duration
	// AgentLimits is each agent's max_concurrent (tools per replica) for
	// the scheduler's per-agent gates; an agent missing from it has no
	// limit.
	AgentLimits map[string]int
	// HeartbeatTTL is how long an agent's replica counts as live after
	// its beat (for the capacity of its gate).
	HeartbeatTTL time.Duration
	// LeaderTTL is the leader lease TTL (config.DefaultLeaderTTL).
	LeaderTTL time.Duration
	// ClaimHandlers is the number of concurrent claim handlers, the
	// dispatcher's goroutines (config.DefaultWorkers; not the containers
	// of package worker).
	ClaimHandlers int
	// Escalation is the hook run with every workflow_escalated event
	// (escalation in sett.yml); an empty command disables it.
	Escalation escalation.Hook
	// VaultManagesToolMemory is true when a vault publishes what tools
	// receive as memory.learnings and memory.handbook (from its files).
	VaultManagesToolMemory bool
	// LeaderServices run alongside the leader's own services, with the
	// leader's context: they start when this process leads and stop when
	// it loses the lease (the vault bridge). A service returning an error
	// gives up leadership, as the built-in ones do.
	LeaderServices []LeaderService
	// StopDirs are the directories whose .sett_stop file pauses the
	// instance (the workspace, the vault).
	StopDirs []string
	// Retention is what the leader's janitor keeps; the zero value keeps
	// everything.
	Retention Retention
}

// ClaimConfig is the part of the claim lifecycle's configuration that the
// ClaimCreator and the ClaimAdvancer share. It is one struct for both
// because both write claims — the creator the first bid deadline, grant
// plan and approval, the advancer every later step — and a claim must be
// judged by the same rules whichever of them wrote it last.
type ClaimConfig struct {
	// BidTimeout is how long consensus waits for an agent's bid before it
	// counts as ignore.
	BidTimeout time.Duration
	// LeaseTTL is the cub's work-lease TTL; a grant is declared lost when
	// its lease is gone this long after the grant.
	LeaseTTL time.Duration
	// MaxConcurrentClaims caps the claims holding grants at once; zero
	// means no limit.
	MaxConcurrentClaims int
	// Rules are the configured agents' bidding rules; an agent whose rules
	// already say ignore for an artefact is not asked to bid on it.
	// Agents without rules are always asked.
	Rules map[string]bidding.Rules
	// Approvals is the approval gate (sett.yml approvals); its zero value
	// gates nothing.
	Approvals config.ApprovalsConfig
	// AskRuleBids sends bid requests to every live consumer, also those
	// whose claim or exclusive bid their rules decide (no bid_script, not
	// reviewers). Zero, the default, records those bids instead of asking
	// when consensus starts: the creator's when it creates a claim, the
	// advancer's when an approved claim leaves pending_approval
	// (orchestrator.decide_rule_bids: false sets it).
	AskRuleBids bool
	// Retry is each agent's retry policy for tool failures;
	// ReviewRetry the same for its review grants (retried once unless
	// the agent sets retry.max_attempts itself). An agent missing from
	// them gets retrypolicy.DefaultPolicy.
	Retry       map[string]retrypolicy.Policy
	ReviewRetry map[string]retrypolicy.Policy
}

// AdvancerConfig is what only the ClaimAdvancer reads.
type AdvancerConfig struct {
	// NoBidTimeout is how long past BidTimeout consensus keeps asking for
	// answers it needs before the claim fails (orchestrator.no_bid_timeout).
	NoBidTimeout time.Duration
	// MaxGrantAttempts bounds how often a grant whose lease was lost is
	// issued again before the claim is terminated.
	MaxGrantAttempts int
	// MaxReviewIterations is the rework limit; 0 means unlimited.
	MaxReviewIterations int
	// ReviewPolicy decides review phases from verdicts and severities;
	// ReviewRoles says how each reviewer counts (blocking, required,
	// advisory). The zero policy is completed by its defaults.
	ReviewPolicy reviewpolicy.Policy
	ReviewRoles  map[string]reviewpolicy.Role
	// ReviewClusters picks the policy and loop rules per artefact type
	// (orchestrator.review_clusters); its Default is always ReviewPolicy
	// (applyDefaults), so a zero value decides everything by ReviewPolicy.
	ReviewClusters reviewpolicy.Clusters
	// AdvisoryDeadlines gives each advisory reviewer's own deadline
	// (agents.<name>.review.deadline); an advisory reviewer absent from
	// it has the default, config.DefaultAdvisoryDeadline.
	AdvisoryDeadlines map[string]time.Duration
	// Learner names the agent granted a learn claim for every human
	// rejection; empty: the human's reason is the learning.
	Learner string
}

// CreatorConfig is what only the ClaimCreator reads.
type CreatorConfig struct {
	// MaxWorkflowArtefacts and MaxChainDepth are workflow budgets.
	MaxWorkflowArtefacts int
	MaxChainDepth        int
	// MaxWorkflowTokens is the token budget of one workflow; zero means
	// no limit.
	MaxWorkflowTokens int64
	// NoBidGrants leaves every grant to the orchestrator: claims carry no
	// GrantPlan, so the last expected bid never grants in its own script
	// and a claim whose bids the rules all decide is not granted by the
	// script creating it (the orchestrator daemon's --disable-bid-grants;
	// for comparison and debugging).
	NoBidGrants bool
	// NoResultCompletion leaves every claim completion to the
	// orchestrator: claims carry no finish plan, so a result never
	// completes its claim in its own script
	// (the orchestrator daemon's --disable-result-completion).
	NoResultCompletion bool
}

// EventLoopConfig is what the EventLoop reads.
type EventLoopConfig struct {
	// Sweep is the period of the re-handling of unacknowledged events
	// (config.DefaultReconcileEvery).
	Sweep time.Duration
	// DeadLetterAfter is how many failed handlings in a row move a queue
	// entry to the dead-letter stream.
	DeadLetterAfter int
	// MaxConcurrentClaims is ClaimConfig's (New copies it here): how many
	// waiting claims a freed slot wakes.
	MaxConcurrentClaims int
}

// ReconcilerConfig is what the Reconciler reads.
type ReconcilerConfig struct {
	// Every is the period of the safety-net sweep over active claims
	// (config.DefaultReconcileEvery).
	Every time.Duration
	// Rate bounds the reconciler's claim reads per second.
	Rate int
}

// LeaderService is a background service only the leader runs.
type LeaderService struct {
	Name string
	Run  func(ctx context.Context) error
}

// ConfigFrom builds Config from a loaded, validated config (or
// config.Default()); the orchestrator daemon's wiring is its one caller
// outside tests. Fields zero in a Config built by hand take the values
// ConfigFrom(config.Default()) has when the orchestrator starts.
func ConfigFrom(c *config.Config) Config {
	agents := make(map[string]string, len(c.Agents))
	rules := make(map[string]bidding.Rules, len(c.Agents))
	limits := make(map[string]int, len(c.Agents))
	retry := make(map[string]retrypolicy.Policy, len(c.Agents))
	roles := make(map[string]reviewpolicy.Role, len(c.Agents))
	reviewRetry := make(map[string]retrypolicy.Policy, len(c.Agents))
	deadlines := map[string]time.Duration{}
	for _, name := range c.AgentNames() {
		a, _ := c.Agent(name)
		agents[name] = a.Role
		rules[name] = bidding.FromConfig(a)
		limits[name] = a.MaxConcurrent
		retry[name] = a.Retry.Policy(false)
		reviewRetry[name] = a.Retry.Policy(true)
		roles[name] = a.Review.Role()
		if d := a.Review.AdvisoryDeadline(); d > 0 {
			deadlines[name] = d
		}
	}
	o := c.Orchestrator
	return Config{
		Claims: ClaimConfig{
			BidTimeout:          o.BidTimeout.Std(),
			LeaseTTL:            o.LeaseTTL.Std(),
			MaxConcurrentClaims: o.MaxConcurrentClaims,
			Rules:               rules,
			Approvals:           c.Approvals,
			AskRuleBids:         !o.DecideRuleBids,
			Retry:               retry,
			ReviewRetry:         reviewRetry,
		},
		Advancer: AdvancerConfig{
			NoBidTimeout:        o.NoBidTimeout.Std(),
			MaxGrantAttempts:    o.MaxGrantAttempts,
			MaxReviewIterations: o.ReviewIterationLimit(),
			ReviewPolicy:        o.ReviewPolicy.Policy(),
			ReviewRoles:         roles,
			ReviewClusters:      o.Clusters(),
			AdvisoryDeadlines:   deadlines,
			Learner:             o.Learner,
		},
		Creator: CreatorConfig{
			MaxWorkflowArtefacts: o.MaxWorkflowArtefacts,
			MaxChainDepth:        o.MaxChainDepth,
			MaxWorkflowTokens:    o.MaxWorkflowTokens,
		},
		Events:          EventLoopConfig{Sweep: config.DefaultReconcileEvery, DeadLetterAfter: o.DeadLetterAfter},
		Reconciler:      ReconcilerConfig{Every: config.DefaultReconcileEvery, Rate: o.ReconcileRate},
		Agents:          agents,
		LivenessRefresh: config.DefaultLivenessRefresh,
		AgentLimits:     limits,
		HeartbeatTTL:    o.AgentHeartbeatTTL.Std(),
		LeaderTTL:       config.DefaultLeaderTTL,
		ClaimHandlers:   config.DefaultWorkers,
		Escalation:      c.Escalation.Hook(),
		Retention:       RetentionFrom(c.Retention),
	}
}

// advisoryDeadline is agent's deadline as an advisory reviewer; 0 when
// it is not one.
func (s *AdvancerConfig) advisoryDeadline(agent string) time.Duration {
	r := s.ReviewRoles[agent]
	if !r.Advisory || r.Blocking || r.Required {
		return 0
	}
	if d := s.AdvisoryDeadlines[agent]; d > 0 {
		return d
	}
	return config.DefaultAdvisoryDeadline
}

// retryPolicy is the policy for agent's failures on a grant of kind.
func (s *ClaimConfig) retryPolicy(agent string, kind blackboard.GrantKind) retrypolicy.Policy {
	m := s.Retry
	if kind == blackboard.GrantReview {
		m = s.ReviewRetry
	}
	if p, ok := m[agent]; ok {
		return p
	}
	p := retrypolicy.DefaultPolicy()
	if kind == blackboard.GrantReview {
		p = p.ForReview(false)
	}
	return p
}

// applyDefaults fills every zero field that has a default with the one
// ConfigFrom(config.Default()) gives, so that a Config built by hand
// (tests, the bench) runs like one built from a file. MaxReviewIterations
// stays as it is: zero means unlimited.
func (s *Config) applyDefaults() {
	d := ConfigFrom(config.Default())
	fill(&s.Claims.BidTimeout, d.Claims.BidTimeout)
	fill(&s.Claims.LeaseTTL, d.Claims.LeaseTTL)
	fill(&s.Advancer.NoBidTimeout, d.Advancer.NoBidTimeout)
	fill(&s.Advancer.MaxGrantAttempts, d.Advancer.MaxGrantAttempts)
	s.Advancer.ReviewPolicy = s.Advancer.ReviewPolicy.WithDefaults()
	s.Advancer.ReviewClusters.Default = reviewpolicy.Cluster{Name: reviewpolicy.DefaultClusterName, Policy: s.Advancer.ReviewPolicy}
	fill(&s.Events.Sweep, d.Events.Sweep)
	fill(&s.Events.DeadLetterAfter, d.Events.DeadLetterAfter)
	fill(&s.Reconciler.Every, d.Reconciler.Every)
	fill(&s.Reconciler.Rate, d.Reconciler.Rate)
	fill(&s.HeartbeatTTL, d.HeartbeatTTL)
	fill(&s.LeaderTTL, d.LeaderTTL)
	fill(&s.ClaimHandlers, d.ClaimHandlers)
	fill(&s.LivenessRefresh, d.LivenessRefresh)
}

// fill sets *v to def when *v is zero or negative.
func fill[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

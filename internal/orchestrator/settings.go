package orchestrator

import (
	"context"
	"time"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/escalation"
	"github.com/settdev/sett/internal/retrypolicy"
	"github.com/settdev/sett/internal/reviewpolicy"
	"github.com/settdev/sett/pkg/blackboard"
)

// Settings is what the orchestrator needs from sett.yml, with defaults
// already applied.
type Settings struct {
	// BidTimeout is how long consensus waits for an agent's bid before it
	// counts as ignore.
	BidTimeout time.Duration
	// NoBidTimeout is how long past BidTimeout consensus keeps asking for
	// answers it needs before the claim fails (orchestrator.no_bid_timeout).
	NoBidTimeout time.Duration
	// LeaseTTL is the cub's work-lease TTL; a grant is declared lost when
	// its lease is gone this long after the grant.
	LeaseTTL time.Duration
	// MaxGrantAttempts bounds how often a grant whose lease was lost is
	// issued again before the claim is terminated.
	MaxGrantAttempts int
	// MaxReviewIterations is the rework limit; 0 means unlimited.
	MaxReviewIterations int
	// MaxWorkflowArtefacts and MaxChainDepth are workflow budgets.
	MaxWorkflowArtefacts int
	MaxChainDepth        int
	// Agents are the configured agents, name → role.
	Agents map[string]string
	// Rules are the configured agents' bidding rules; an agent whose rules
	// already say ignore for an artefact is not asked to bid on it.
	// Agents without rules are always asked.
	Rules map[string]bidding.Rules
	// Approvals is the approval gate (sett.yml approvals); its zero value
	// gates nothing.
	Approvals config.ApprovalsConfig
	// MaxConcurrentClaims caps the claims holding grants at once; zero
	// means no limit.
	MaxConcurrentClaims int
	// NoBidGrants leaves every grant to the orchestrator: claims carry no
	// GrantPlan, so the last expected bid never grants in its own script
	// (the orchestrator daemon's --disable-bid-grants; for comparison and
	// debugging).
	NoBidGrants bool
	// AskRuleBids sends bid requests to every live consumer, also those
	// whose claim or exclusive bid their rules decide (no bid_script, not
	// reviewers). Zero, the default, records those bids when the claim is
	// created instead of asking (orchestrator.decide_rule_bids: false
	// sets it).
	AskRuleBids bool
	// NoResultCompletion leaves every claim completion to the
	// orchestrator: claims carry no finish plan, so a result never
	// completes its claim in its own script
	// (the orchestrator daemon's --disable-result-completion).
	NoResultCompletion bool
	// MaxWorkflowTokens is the token budget of one workflow; zero means
	// no limit.
	MaxWorkflowTokens int64
	// AgentLimits is each agent's max_concurrent (tools per replica) for
	// the scheduler's per-agent gates; an agent missing from it has no
	// limit.
	AgentLimits map[string]int
	// HeartbeatTTL is how long an agent's replica counts as live after
	// its beat (for the capacity of its gate).
	HeartbeatTTL time.Duration
	// Retry is each agent's retry policy for tool failures;
	// ReviewRetry the same for its review grants (retried once unless
	// the agent sets retry.max_attempts itself). An agent missing from
	// them gets retrypolicy.DefaultPolicy.
	Retry       map[string]retrypolicy.Policy
	ReviewRetry map[string]retrypolicy.Policy
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
	// Learner names the agent granted a learn claim for every human
	// rejection; empty: the human's reason is the learning.
	Learner string
	// LeaderTTL is the leader lease TTL (config.DefaultLeaderTTL).
	LeaderTTL time.Duration
	// Workers is the number of concurrent claim handlers
	// (config.DefaultWorkers).
	Workers int
	// LivenessRefresh is how often agent heartbeats are re-read
	// (config.DefaultLivenessRefresh). A registering agent triggers a read at once, so this only
	// bounds how long a dead agent is still asked to bid (its bids then
	// time out).
	LivenessRefresh time.Duration
	// ReconcileEvery is the period of the safety-net sweep over active
	// claims and unacknowledged events
	// (config.DefaultReconcileEvery).
	ReconcileEvery time.Duration
	// ReconcileRate bounds the reconciler's claim reads per second.
	ReconcileRate int
	// DeadLetterAfter is how many failed handlings in a row move a queue
	// entry to the dead-letter stream.
	DeadLetterAfter int
	// Retention is what the leader's janitor keeps; the zero value keeps
	// everything.
	Retention Retention
}

// LeaderService is a background service only the leader runs.
type LeaderService struct {
	Name string
	Run  func(ctx context.Context) error
}

// SettingsFrom builds Settings from a loaded, validated config (or
// config.Default()). Fields zero in a Settings built by hand take the
// values SettingsFrom(config.Default()) has when the orchestrator starts.
func SettingsFrom(c *config.Config) Settings {
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
	return Settings{
		BidTimeout:           o.BidTimeout.Std(),
		NoBidTimeout:         o.NoBidTimeout.Std(),
		LeaseTTL:             o.LeaseTTL.Std(),
		MaxGrantAttempts:     o.MaxGrantAttempts,
		DeadLetterAfter:      o.DeadLetterAfter,
		ReconcileRate:        o.ReconcileRate,
		MaxReviewIterations:  o.ReviewIterationLimit(),
		MaxWorkflowArtefacts: o.MaxWorkflowArtefacts,
		MaxChainDepth:        o.MaxChainDepth,
		Agents:               agents,
		Rules:                rules,
		Approvals:            c.Approvals,
		Learner:              o.Learner,
		MaxConcurrentClaims:  o.MaxConcurrentClaims,
		AskRuleBids:          !o.DecideRuleBids,
		MaxWorkflowTokens:    o.MaxWorkflowTokens,
		AgentLimits:          limits,
		Retry:                retry,
		Escalation:           c.Escalation.Hook(),
		ReviewPolicy:         o.ReviewPolicy.Policy(),
		ReviewClusters:       o.Clusters(),
		ReviewRoles:          roles,
		AdvisoryDeadlines:    deadlines,
		ReviewRetry:          reviewRetry,
		HeartbeatTTL:         o.AgentHeartbeatTTL.Std(),
		LeaderTTL:            config.DefaultLeaderTTL,
		Workers:              config.DefaultWorkers,
		LivenessRefresh:      config.DefaultLivenessRefresh,
		ReconcileEvery:       config.DefaultReconcileEvery,
		Retention:            RetentionFrom(c.Retention),
	}
}

// advisoryDeadline is agent's deadline as an advisory reviewer; 0 when
// it is not one.
func (s *Settings) advisoryDeadline(agent string) time.Duration {
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
func (s *Settings) retryPolicy(agent string, kind blackboard.GrantKind) retrypolicy.Policy {
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
// config.Default() gives, so that a Settings built by hand (tests, the
// bench) runs like one built from a file. MaxReviewIterations stays as it
// is: zero means unlimited.
func (s *Settings) applyDefaults() {
	d := SettingsFrom(config.Default())
	fill(&s.BidTimeout, d.BidTimeout)
	fill(&s.NoBidTimeout, d.NoBidTimeout)
	fill(&s.LeaseTTL, d.LeaseTTL)
	fill(&s.MaxGrantAttempts, d.MaxGrantAttempts)
	s.ReviewPolicy = s.ReviewPolicy.WithDefaults()
	s.ReviewClusters.Default = reviewpolicy.Cluster{Name: reviewpolicy.DefaultClusterName, Policy: s.ReviewPolicy}
	fill(&s.HeartbeatTTL, d.HeartbeatTTL)
	fill(&s.LeaderTTL, d.LeaderTTL)
	fill(&s.Workers, d.Workers)
	fill(&s.LivenessRefresh, d.LivenessRefresh)
	fill(&s.ReconcileRate, d.ReconcileRate)
	fill(&s.DeadLetterAfter, d.DeadLetterAfter)
	fill(&s.ReconcileEvery, d.ReconcileEvery)
}

// fill sets *v to def when *v is zero or negative.
func fill[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

package cub

import (
	"time"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/tool"
)

// Config is one agent's configuration as the cub needs it, with defaults
// applied. Build it with ConfigFrom; fields left zero in one built by hand
// take the defaults of internal/config when the cub starts. It stays one
// flat struct because the cub daemon builds it in one place, from sett.yml
// and its command line (the tool isolation adds the ledger and sandbox);
// New hands each service only its part (BidderConfig, WorkRunnerConfig,
// InboxLoopConfig, LeaseKeeperConfig).
type Config struct {
	Agent            string
	Role             string
	Strategy         string   // review | claim | exclusive | ignore
	Consumes         []string // artefact type globs; empty = every type
	BidOnOwnOutputs  bool
	BidScript        []string
	BidScriptTimeout time.Duration
	// Command is the tool command.
	Command []string
	// Environment is passed to the tool on top of the scrubbed base.
	Environment map[string]string
	// EnvironmentFromHost names variables of the cub's environment that
	// pass to the tool unchanged (environment_from_host); nil: none.
	EnvironmentFromHost []string
	// Workspace is the tool's working directory.
	Workspace   string
	ToolTimeout time.Duration
	// StopGrace is the time between SIGTERM and SIGKILL when a tool is
	// stopped; zero kills at once.
	StopGrace     time.Duration
	MaxConcurrent int
	// DrainTimeout is how long running tools may go on after the cub is
	// told to stop; zero stops them at once.
	DrainTimeout time.Duration
	// MaxTokensPerClaim fails a run whose reported usage exceeds it, for
	// good (max_tokens_per_claim); zero means no limit.
	MaxTokensPerClaim int64
	MaxOutput         int
	MaxPayload        int
	// ContextDepth bounds the context chain (levels of sources;
	// config.DefaultContextDepth).
	ContextDepth int
	LeaseTTL     time.Duration
	HeartbeatTTL time.Duration
	// BidTimeout is the orchestrator's bid_timeout: a bid write is retried
	// until the request's bid deadline (its delivery plus this).
	BidTimeout time.Duration
	// Consumer names this cub in the inbox consumer group; keep it stable
	// across restarts so unfinished entries come back.
	Consumer string
	// WorkspaceReadOnly is set for an agent with workspace.mode ro; only
	// a Sandbox (or a container) enforces it.
	WorkspaceReadOnly bool
	// ToolLedger records running tools for the next cub (nil: none).
	ToolLedger *tool.Ledger
	// Sandbox, when set, starts every tool in private namespaces.
	Sandbox *tool.Sandbox
}

// ConfigFrom builds Config for agent from a validated config.
func ConfigFrom(c *config.Config, agent, workspace, consumer string) (Config, bool) {
	a, ok := c.Agent(agent)
	if !ok {
		return Config{}, false
	}
	command := a.Command
	if a.IsController() {
		// A controller's tool is the worker launcher, which the runtime
		// passes as the cub's arguments with the worker's whole spec;
		// a.Command is what the worker container runs.
		command = nil
	}
	return Config{
		Agent:               agent,
		Role:                a.Role,
		Strategy:            string(a.BiddingStrategy),
		Consumes:            a.Consumes,
		BidOnOwnOutputs:     a.BidOnOwnOutputs,
		BidScript:           a.BidScript,
		BidScriptTimeout:    a.BidScriptTimeout.Std(),
		Command:             command,
		Environment:         a.Environment,
		EnvironmentFromHost: a.EnvironmentFromHost,
		Workspace:           workspace,
		ToolTimeout:         a.Timeout.Std(),
		StopGrace:           a.StopGrace.Std(),
		DrainTimeout:        a.DrainTimeout.Std(),
		MaxConcurrent:       a.MaxConcurrent,
		MaxTokensPerClaim:   a.MaxTokensPerClaim,
		MaxOutput:           int(a.MaxOutputBytes.Int64()),
		MaxPayload:          int(c.Orchestrator.MaxPayloadBytes.Int64()),
		LeaseTTL:            c.Orchestrator.LeaseTTL.Std(),
		HeartbeatTTL:        c.Orchestrator.AgentHeartbeatTTL.Std(),
		BidTimeout:          c.Orchestrator.BidTimeout.Std(),
		ContextDepth:        config.DefaultContextDepth,
		Consumer:            consumer,
		WorkspaceReadOnly:   a.Workspace.Mode != config.WorkspaceReadWrite,
	}, true
}

// applyDefaults fills every zero field that has a default with the value
// ConfigFrom gives for an agent config.Default() knows nothing more
// about, so that a Config built by hand (tests) runs like one built
// from a file. Role and Consumer default to the agent's name.
func (s *Config) applyDefaults() {
	d := defaultConfig(s.Agent)
	if s.Strategy == "" {
		s.Strategy = d.Strategy
	}
	if s.Role == "" {
		s.Role = d.Role
	}
	fill(&s.BidScriptTimeout, d.BidScriptTimeout)
	fill(&s.ToolTimeout, d.ToolTimeout)
	fill(&s.MaxConcurrent, d.MaxConcurrent)
	fill(&s.MaxOutput, d.MaxOutput)
	fill(&s.MaxPayload, d.MaxPayload)
	fill(&s.ContextDepth, d.ContextDepth)
	fill(&s.LeaseTTL, d.LeaseTTL)
	fill(&s.HeartbeatTTL, d.HeartbeatTTL)
	fill(&s.BidTimeout, d.BidTimeout)
	if s.Consumer == "" {
		s.Consumer = d.Consumer
	}
}

// defaultConfig is ConfigFrom for agent configured with nothing but its
// name.
func defaultConfig(agent string) Config {
	c := config.Default()
	c.Agents[agent] = config.AgentConfig{}
	c.ApplyDefaults()
	d, _ := ConfigFrom(c, agent, "", agent)
	return d
}

// Identity is who the cub is. Every service's configuration carries it,
// because each names the agent (and its consumer) in what it writes.
type Identity struct {
	Agent string
	Role  string
	// Consumer names this cub in the inbox consumer group.
	Consumer string
}

// ToolPlace is where the agent's programs run. The bidder and the work
// runner share it: the bid script runs where the tool does.
type ToolPlace struct {
	// Workspace is the working directory.
	Workspace string
	// ToolLedger records running programs for the next cub (nil: none).
	ToolLedger *tool.Ledger
	// Sandbox, when set, starts every program in private namespaces.
	Sandbox *tool.Sandbox
}

// BidderConfig is what the Bidder reads.
type BidderConfig struct {
	Identity
	ToolPlace
	Strategy         string   // review | claim | exclusive | ignore
	Consumes         []string // artefact type globs; empty = every type
	BidOnOwnOutputs  bool
	BidScript        []string
	BidScriptTimeout time.Duration
}

// WorkRunnerConfig is what the WorkRunner reads.
type WorkRunnerConfig struct {
	Identity
	ToolPlace
	// Command is the tool command.
	Command []string
	// Environment is passed to the tool on top of the scrubbed base.
	Environment map[string]string
	// EnvironmentFromHost names variables of the cub's environment that
	// pass to the tool unchanged; nil: none.
	EnvironmentFromHost []string
	ToolTimeout         time.Duration
	// StopGrace is the time between SIGTERM and SIGKILL when a tool is
	// stopped; zero kills at once.
	StopGrace time.Duration
	// MaxTokensPerClaim fails a run whose reported usage exceeds it, for
	// good; zero means no limit.
	MaxTokensPerClaim int64
	MaxOutput         int
	MaxPayload        int
}

// InboxLoopConfig is what the InboxLoop reads.
type InboxLoopConfig struct {
	Identity
	// MaxConcurrent is how many tools run at once.
	MaxConcurrent int
	// LeaseTTL is the work lease's TTL.
	LeaseTTL time.Duration
	// BidTimeout is the orchestrator's bid_timeout: a bid write is
	// retried until the request's bid deadline (its delivery plus this).
	BidTimeout time.Duration
}

// LeaseKeeperConfig is what the LeaseKeeper reads.
type LeaseKeeperConfig struct {
	Identity
	LeaseTTL     time.Duration
	HeartbeatTTL time.Duration
}

func (s *Config) identity() Identity {
	return Identity{Agent: s.Agent, Role: s.Role, Consumer: s.Consumer}
}

func (s *Config) toolPlace() ToolPlace {
	return ToolPlace{Workspace: s.Workspace, ToolLedger: s.ToolLedger, Sandbox: s.Sandbox}
}

func (s *Config) bidder() BidderConfig {
	return BidderConfig{Identity: s.identity(), ToolPlace: s.toolPlace(), Strategy: s.Strategy, Consumes: s.Consumes,
		BidOnOwnOutputs: s.BidOnOwnOutputs, BidScript: s.BidScript, BidScriptTimeout: s.BidScriptTimeout}
}

func (s *Config) workRunner() WorkRunnerConfig {
	return WorkRunnerConfig{Identity: s.identity(), ToolPlace: s.toolPlace(), Command: s.Command, Environment: s.Environment,
		EnvironmentFromHost: s.EnvironmentFromHost, ToolTimeout: s.ToolTimeout, StopGrace: s.StopGrace,
		MaxTokensPerClaim: s.MaxTokensPerClaim, MaxOutput: s.MaxOutput, MaxPayload: s.MaxPayload}
}

func (s *Config) inboxLoop() InboxLoopConfig {
	return InboxLoopConfig{Identity: s.identity(), MaxConcurrent: s.MaxConcurrent, LeaseTTL: s.LeaseTTL, BidTimeout: s.BidTimeout}
}

func (s *Config) leaseKeeper() LeaseKeeperConfig {
	return LeaseKeeperConfig{Identity: s.identity(), LeaseTTL: s.LeaseTTL, HeartbeatTTL: s.HeartbeatTTL}
}

// fill sets *v to def when *v is zero or negative.
func fill[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

package cub

import (
	"time"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/tool"
)

// Settings is one agent's configuration as the cub needs it, with
// defaults applied. Build it with SettingsFrom; fields left zero in one
// built by hand take the defaults of internal/config when the cub starts.
type Settings struct {
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

// SettingsFrom builds Settings for agent from a validated config.
func SettingsFrom(c *config.Config, agent, workspace, consumer string) (Settings, bool) {
	a, ok := c.Agent(agent)
	if !ok {
		return Settings{}, false
	}
	command := a.Command
	if a.IsController() {
		// A controller's tool is the worker launcher, which the runtime
		// passes as the cub's arguments with the worker's whole spec;
		// a.Command is what the worker container runs.
		command = nil
	}
	return Settings{
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
// SettingsFrom gives for an agent config.Default() knows nothing more
// about, so that a Settings built by hand (tests) runs like one built
// from a file. Role and Consumer default to the agent's name.
func (s *Settings) applyDefaults() {
	d := defaultSettings(s.Agent)
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

// defaultSettings is SettingsFrom for agent configured with nothing but
// its name.
func defaultSettings(agent string) Settings {
	c := config.Default()
	c.Agents[agent] = config.AgentConfig{}
	c.ApplyDefaults()
	d, _ := SettingsFrom(c, agent, "", agent)
	return d
}

// fill sets *v to def when *v is zero or negative.
func fill[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

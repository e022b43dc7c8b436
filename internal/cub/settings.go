package cub

import (
	"time"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/tool"
)

// Settings is one agent's configuration as the cub needs it, with
// defaults applied.
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
	// ContextDepth bounds the context chain (levels of sources); zero
	// means 10.
	ContextDepth int
	LeaseTTL     time.Duration
	HeartbeatTTL time.Duration
	// BidTimeout is the orchestrator's bid_timeout: a bid write is retried
	// until the request's bid deadline (its delivery plus this). Zero
	// means 5s.
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
		Consumer:            consumer,
		WorkspaceReadOnly:   a.Workspace.Mode != config.WorkspaceReadWrite,
	}, true
}

func (s *Settings) applyDefaults() {
	if s.Strategy == "" {
		s.Strategy = "exclusive"
	}
	if s.Role == "" {
		s.Role = s.Agent
	}
	if s.BidScriptTimeout <= 0 {
		s.BidScriptTimeout = 5 * time.Second
	}
	if s.ToolTimeout <= 0 {
		s.ToolTimeout = 10 * time.Minute
	}
	if s.MaxConcurrent < 1 {
		s.MaxConcurrent = 1
	}
	if s.MaxOutput <= 0 {
		s.MaxOutput = 4 << 20
	}
	if s.MaxPayload <= 0 {
		s.MaxPayload = 1 << 20
	}
	if s.ContextDepth <= 0 {
		s.ContextDepth = 10
	}
	if s.LeaseTTL <= 0 {
		s.LeaseTTL = 30 * time.Second
	}
	if s.HeartbeatTTL <= 0 {
		s.HeartbeatTTL = 10 * time.Second
	}
	if s.BidTimeout <= 0 {
		s.BidTimeout = 5 * time.Second
	}
	if s.Consumer == "" {
		s.Consumer = s.Agent
	}
}

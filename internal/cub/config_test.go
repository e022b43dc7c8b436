package cub

import (
	"slices"
	"testing"
	"time"

	"github.com/settdev/sett/internal/config"
)

// TestConfigFromLeavesAControllersCommandToItsArguments: a controller's
// configured command is the worker's; the cub's own tool is the launcher
// the runtime passes as its arguments.
func TestConfigFromLeavesAControllersCommandToItsArguments(t *testing.T) {
	cfg, _, err := config.Parse([]byte(`version: "1.0"
agents:
  planner:
    command: [sett-writer]
    mode: controller
    worker: {image: sett-example-writer:local, max_concurrent: 3}
  writer:
    command: [sett-writer]
`), "sett.yml")
	if err != nil {
		t.Fatal(err)
	}
	ctl, ok := ConfigFrom(cfg, "planner", "/workspace", "c")
	if !ok || len(ctl.Command) != 0 || ctl.MaxConcurrent != 3 {
		t.Errorf("controller: command %q max_concurrent %d, want none (from the arguments) and worker.max_concurrent 3", ctl.Command, ctl.MaxConcurrent)
	}
	usual, ok := ConfigFrom(cfg, "writer", "/workspace", "c")
	if !ok || !slices.Equal(usual.Command, []string{"sett-writer"}) {
		t.Errorf("usual agent: command %q, want [sett-writer]", usual.Command)
	}
}

// TestConfigFromCarriesDrainAndPassThrough: drain_timeout and
// environment_from_host reach the cub's settings.
func TestConfigFromCarriesDrainAndPassThrough(t *testing.T) {
	cfg, _, err := config.Parse([]byte(`version: "1.0"
agents:
  writer:
    command: [sett-writer]
    drain_timeout: 45s
    environment_from_host: [OPENAI_API_KEY]
`), "sett.yml")
	if err != nil {
		t.Fatal(err)
	}
	set, ok := ConfigFrom(cfg, "writer", "/workspace", "c")
	if !ok || set.DrainTimeout != 45*time.Second || !slices.Equal(set.EnvironmentFromHost, []string{"OPENAI_API_KEY"}) {
		t.Errorf("drain %v, pass-through %v; want 45s and [OPENAI_API_KEY]", set.DrainTimeout, set.EnvironmentFromHost)
	}
}

// TestHandBuiltConfigTakesTheConfigDefaults: a Config with only an
// agent's name runs with internal/config's defaults, the same a file
// naming that agent and nothing else gives.
func TestHandBuiltConfigTakesTheConfigDefaults(t *testing.T) {
	set := Config{Agent: "writer"}
	set.applyDefaults()
	if set.Strategy != string(config.DefaultBiddingStrategy) || set.Role != "writer" || set.Consumer != "writer" ||
		set.BidScriptTimeout != config.DefaultBidScriptTimeout.Std() || set.ToolTimeout != config.DefaultAgentTimeout.Std() ||
		set.MaxConcurrent != config.DefaultMaxConcurrent || set.MaxOutput != int(config.DefaultMaxOutputBytes.Int64()) ||
		set.MaxPayload != int(config.DefaultMaxPayloadBytes.Int64()) || set.ContextDepth != config.DefaultContextDepth ||
		set.LeaseTTL != config.DefaultLeaseTTL.Std() || set.HeartbeatTTL != config.DefaultAgentHeartbeatTTL.Std() ||
		set.BidTimeout != config.DefaultBidTimeout.Std() {
		t.Errorf("hand-built config after defaults: %+v", set)
	}
	kept := Config{Agent: "writer", ToolTimeout: time.Second, MaxConcurrent: 3}
	kept.applyDefaults()
	if kept.ToolTimeout != time.Second || kept.MaxConcurrent != 3 {
		t.Errorf("set fields replaced: timeout %v, max_concurrent %d", kept.ToolTimeout, kept.MaxConcurrent)
	}
}

package config

import (
	"slices"
	"testing"
	"time"
)

// TestExampleFile keeps sett.yml.example, which documents every key, loading
// cleanly and holding the example agents that the demo relies on.
func TestExampleFile(t *testing.T) {
	cfg, warnings, err := Load("../../sett.yml.example")
	if err != nil {
		t.Fatalf("sett.yml.example: %v", err)
	}
	if len(warnings) != 0 {
		t.Errorf("sett.yml.example has warnings: %q", warnings)
	}
	if got, want := cfg.AgentNames(), []string{"auditor", "coder", "planner", "reviewer"}; !slices.Equal(got, want) {
		t.Fatalf("agents = %v, want %v", got, want)
	}

	agents := []struct {
		name     string
		strategy BiddingStrategy
		consumes []string
		command  []string
		image    string
	}{
		{name: "reviewer", strategy: BidReview, consumes: []string{"Plan", "Code*"}, command: []string{"sett-reviewer"}, image: "sett-example-reviewer:local"},
		{name: "planner", strategy: BidExclusive, consumes: []string{"GoalDefined"}, command: []string{"sett-writer", "--type", "Plan"}, image: "sett-example-writer:local"},
		{name: "coder", strategy: BidExclusive, consumes: []string{"Plan"}, command: []string{"sett-writer", "--type", "CodeChange"}, image: "sett-example-writer:local"},
		{name: "auditor", strategy: BidClaim, consumes: []string{"Plan"}, command: []string{"sett-writer", "--type", "AuditNote"}, image: "sett-example-writer:local"},
	}
	for _, tt := range agents {
		t.Run(tt.name, func(t *testing.T) {
			a, ok := cfg.Agent(tt.name)
			if !ok {
				t.Fatalf("agent %s missing", tt.name)
			}
			if a.BiddingStrategy != tt.strategy || !slices.Equal(a.Consumes, tt.consumes) ||
				!slices.Equal(a.Command, tt.command) || a.Image != tt.image {
				t.Fatalf("agent %s = strategy %s consumes %v command %v image %s; want %s %v %v %s",
					tt.name, a.BiddingStrategy, a.Consumes, a.Command, a.Image, tt.strategy, tt.consumes, tt.command, tt.image)
			}
		})
	}

	// The example shows the defaults; if a default changes, so must the
	// example.
	o := cfg.Orchestrator
	defaults := []struct {
		name      string
		got, want any
	}{
		{"max_review_iterations", o.ReviewIterationLimit(), DefaultMaxReviewIterations},
		{"bid_timeout", o.BidTimeout, DefaultBidTimeout},
		{"lease_ttl", o.LeaseTTL, DefaultLeaseTTL},
		{"max_grant_attempts", o.MaxGrantAttempts, DefaultMaxGrantAttempts},
		{"max_workflow_artefacts", o.MaxWorkflowArtefacts, DefaultMaxWorkflowArtefacts},
		{"max_chain_depth", o.MaxChainDepth, DefaultMaxChainDepth},
		{"max_payload_bytes", o.MaxPayloadBytes, DefaultMaxPayloadBytes},
		{"agent_heartbeat_ttl", o.AgentHeartbeatTTL, DefaultAgentHeartbeatTTL},
		{"http_addr", o.HTTPAddr, DefaultHTTPAddr},
		{"redis image", cfg.Services.Redis.Image, DefaultRedisImage},
		{"reviewer timeout", cfg.Agents["reviewer"].Timeout.Std(), 10 * time.Minute},
		{"reviewer max_output_bytes", cfg.Agents["reviewer"].MaxOutputBytes, DefaultMaxOutputBytes},
	}
	for _, d := range defaults {
		if d.got != d.want {
			t.Errorf("sett.yml.example %s = %v, want the default %v", d.name, d.got, d.want)
		}
	}
}

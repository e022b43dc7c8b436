package config

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/priority"
	"github.com/settdev/sett/internal/retrypolicy"
	"github.com/settdev/sett/internal/reviewpolicy"
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
		{"decide_rule_bids", o.DecideRuleBids, DefaultDecideRuleBids},
		{"http_addr", o.HTTPAddr, DefaultHTTPAddr},
		{"redis image", cfg.Services.Redis.Image, DefaultRedisImage},
		{"reviewer timeout", cfg.Agents["reviewer"].Timeout.Std(), 10 * time.Minute},
		{"reviewer max_output_bytes", cfg.Agents["reviewer"].MaxOutputBytes, DefaultMaxOutputBytes},
		{"review_policy", fmt.Sprint(o.ReviewPolicy.Policy()), fmt.Sprint(reviewpolicy.DefaultPolicy())},
		{"priority weights", fmt.Sprint(o.Priority.ScoreWeights()), fmt.Sprint(priority.DefaultWeights())},
		{"reviewer review", cfg.Agents["reviewer"].Review, ReviewConfig{}},
		{"reviewer retry", fmt.Sprint(cfg.Agents["reviewer"].Retry.Policy(false)), fmt.Sprint(retrypolicy.DefaultPolicy())},
		{"reviewer retry of a review grant", cfg.Agents["reviewer"].Retry.Policy(true).MaxAttempts, retrypolicy.ReviewerMaxAttempts},
		{"escalation timeout", cfg.Escalation.Timeout, DefaultEscalationTimeout},
		{"escalation command", len(cfg.Escalation.Command), 0},
		{"retention", cfg.Retention, RetentionConfig{
			Workflows: DefaultRetentionWorkflows, EventsMaxLen: DefaultRetentionEventsMaxLen,
			EventsMaxAge: DefaultRetentionEventsMaxAge, ConsumerIdle: DefaultRetentionConsumerIdle,
			Interval: DefaultRetentionInterval, Batch: DefaultRetentionBatch,
		}},
	}
	for _, d := range defaults {
		if d.got != d.want {
			t.Errorf("sett.yml.example %s = %v, want the default %v", d.name, d.got, d.want)
		}
	}
}

// exampleClusters returns the commented cluster configurations at the end
// of sett.yml.example, uncommented: each block of "# orchestrator:" and
// "# agents:" lines.
func exampleClusters(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../sett.yml.example")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
			cur = nil
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		body, ok := strings.CutPrefix(line, "# ")
		switch {
		case ok && (strings.HasPrefix(body, "orchestrator:") || strings.HasPrefix(body, "agents:") || (len(cur) > 0 && strings.HasPrefix(body, "  "))):
			cur = append(cur, body)
		default:
			flush()
		}
	}
	flush()
	return blocks
}

// TestExampleClusters keeps the memory and review design's three clusters in sett.yml.example
// loadable and deciding as the design says.
func TestExampleClusters(t *testing.T) {
	blocks := exampleClusters(t)
	if len(blocks) != 3 {
		t.Fatalf("found %d cluster examples, want 3:\n%s", len(blocks), strings.Join(blocks, "---\n"))
	}
	review := func(agent, status, severity string) reviewpolicy.Review {
		if status == "missing" {
			return reviewpolicy.Review{Agent: agent, State: reviewpolicy.StateMissing}
		}
		payload := fmt.Sprintf(`{"status":%q,"severity":%q}`, status, severity)
		return reviewpolicy.Review{Agent: agent, State: reviewpolicy.StateDelivered, Verdict: reviewpolicy.Judge(payload, nil)}
	}
	tests := []struct {
		name    string
		block   string
		reviews [][3]string // agent, status, severity
		want    reviewpolicy.Outcome
	}{
		{name: "critique: a High finding reworks", block: blocks[0],
			reviews: [][3]string{{"ct-security", "DONE", "High"}, {"ct-scalability", "DONE", "Low"}, {"ct-maintainability", "ERROR", ""}, {"ct-strategy", "missing", ""}},
			want:    reviewpolicy.OutcomeRework},
		{name: "critique: one usable review fails", block: blocks[0],
			reviews: [][3]string{{"ct-security", "DONE", "Low"}, {"ct-scalability", "ERROR", ""}, {"ct-maintainability", "ERROR", ""}, {"ct-strategy", "missing", ""}},
			want:    reviewpolicy.OutcomeFail},
		{name: "verification: one ERROR proceeds", block: blocks[1],
			reviews: [][3]string{{"v-build", "DONE", "PASS"}, {"v-tests", "ERROR", ""}, {"v-tasks", "DONE", "PASS"}, {"v-feature", "DONE", "PASS"}},
			want:    reviewpolicy.OutcomeProceed},
		{name: "verification: build ERROR fails", block: blocks[1],
			reviews: [][3]string{{"v-build", "ERROR", ""}, {"v-tests", "DONE", "PASS"}, {"v-tasks", "DONE", "PASS"}, {"v-feature", "DONE", "PASS"}},
			want:    reviewpolicy.OutcomeFail},
		{name: "verification: NEEDS_REVISION reworks", block: blocks[1],
			reviews: [][3]string{{"v-build", "DONE", "PASS"}, {"v-tests", "NEEDS_REVISION", "FAIL"}, {"v-tasks", "DONE", "PASS"}, {"v-feature", "DONE", "PASS"}},
			want:    reviewpolicy.OutcomeRework},
		{name: "release: security Blocker fails though the others approve", block: blocks[2],
			reviews: [][3]string{{"r-security", "DONE", "Blocker"}, {"r-quality", "DONE", "Minor"}, {"r-testing", "DONE", "Minor"}, {"r-knowledge", "DONE", "Minor"}},
			want:    reviewpolicy.OutcomeFail},
		{name: "release: knowledge ERROR ignored", block: blocks[2],
			reviews: [][3]string{{"r-security", "DONE", "Minor"}, {"r-quality", "DONE", "Minor"}, {"r-testing", "DONE", "Minor"}, {"r-knowledge", "ERROR", ""}},
			want:    reviewpolicy.OutcomeProceed},
		{name: "release: Major reworks", block: blocks[2],
			reviews: [][3]string{{"r-security", "DONE", "Minor"}, {"r-quality", "DONE", "Major"}, {"r-testing", "DONE", "Minor"}, {"r-knowledge", "DONE", "Minor"}},
			want:    reviewpolicy.OutcomeRework},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, warnings, err := Parse([]byte("version: \"1.0\"\n"+tt.block), "cluster.yml")
			if err != nil || len(warnings) != 0 {
				t.Fatalf("the example does not load cleanly: %v %q\n%s", err, warnings, tt.block)
			}
			var reviews []reviewpolicy.Review
			for _, r := range tt.reviews {
				a, ok := cfg.Agent(r[0])
				if !ok || a.BiddingStrategy != BidReview {
					t.Fatalf("agent %s missing or not a reviewer", r[0])
				}
				rv := review(r[0], r[1], r[2])
				rv.Role = a.Review.Role()
				reviews = append(reviews, rv)
			}
			d := reviewpolicy.Decide(cfg.Orchestrator.ReviewPolicy.Policy(), reviews)
			if d.Outcome != tt.want {
				t.Fatalf("Decide = %s (%s): %s; want %s", d.Outcome, d.Rule, d.Reason, tt.want)
			}
		})
	}
}

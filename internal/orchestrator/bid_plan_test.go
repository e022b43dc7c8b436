package orchestrator

import (
	"reflect"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/reviewpolicy"
)

// testDirectory is a directory of agents (name → role) with live alive,
// read from nowhere.
func testDirectory(agents map[string]string, live ...string) *AgentDirectory {
	d := NewAgentDirectory(nil, zerolog.Nop(), agents, time.Second)
	d.live, d.loaded = live, true
	return d
}

func TestPlanBidsRemembersAbsentConsumers(t *testing.T) {
	t.Parallel()
	dir := testDirectory(map[string]string{"coder": "coder", "reviewer": "reviewer", "writer": "writer", "other": "other"},
		"coder", "other", "writer")
	rules := map[string]bidding.Rules{
		"coder":    {Role: "coder", Strategy: blackboard.BidExclusive, Consumes: []string{"Plan"}},
		"coder-b":  {Role: "coder", Strategy: blackboard.BidExclusive},
		"coder-c":  {Role: "coder", Strategy: blackboard.BidExclusive},
		"reviewer": {Role: "reviewer", Strategy: blackboard.BidReview, Consumes: []string{"Plan"}},
		"writer":   {Role: "writer", Strategy: blackboard.BidExclusive, Consumes: []string{"GoalDefined"}},
		"other":    {Role: "other", Strategy: blackboard.BidClaim, HasScript: true},
	}
	got := planBids(dir, rules, "Plan", "writer")
	want := bidPlan{Bidders: []string{"coder", "other"}, Ignoring: []string{"writer"}, Absent: []string{"reviewer"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("planBids = %+v, want %+v", got, want)
	}
}

// TestGrantPlanIsTheConsensusDecision: the grant the bid script may apply
// is the one decideConsensus makes from the predicted bids, and there is
// none when the orchestrator must decide (an absent consumer, a bid
// script, a grant to several agents, no work bid).
func TestGrantPlanIsTheConsensusDecision(t *testing.T) {
	t.Parallel()
	agents := map[string]string{"coder": "coder", "coder-b": "coder", "reviewer": "reviewer", "scripted": "scripted"}
	rules := map[string]bidding.Rules{
		"coder":    {Role: "coder", Strategy: blackboard.BidExclusive, Consumes: []string{"Plan", "Build"}},
		"coder-b":  {Role: "coder", Strategy: blackboard.BidExclusive, Consumes: []string{"Plan", "Build"}},
		"reviewer": {Role: "reviewer", Strategy: blackboard.BidReview, Consumes: []string{"Plan"}},
		// A bid script decides at bid time: its agent is a possible
		// consumer of every type, so only types produced by its own role
		// (never bid on) leave it out.
		"scripted": {Role: "scripted", Strategy: blackboard.BidClaim, HasScript: true},
	}
	creator := func(live ...string) *ClaimCreator {
		cfg := Config{Claims: ClaimConfig{Rules: rules, LeaseTTL: 30 * time.Second}, Agents: agents,
			Advancer: AdvancerConfig{ReviewRoles: map[string]reviewpolicy.Role{}}}
		cfg.applyDefaults()
		dir := testDirectory(agents, live...)
		epoch := func() int64 { return 1 }
		adv := NewClaimAdvancer(AdvancerParams{Config: cfg.Advancer, Claims: cfg.Claims, Directory: dir, Epoch: epoch,
			Metrics: NewMetrics(nil), Log: zerolog.Nop()})
		return NewClaimCreator(CreatorParams{Config: cfg.Creator, Claims: cfg.Claims, Directory: dir, Advancer: adv, Epoch: epoch,
			Metrics: NewMetrics(nil), Log: zerolog.Nop()})
	}
	for _, tc := range []struct {
		name  string
		live  []string
		typ   string
		agent string
		kind  blackboard.GrantKind
	}{
		{name: "review first: the reviewer alone", live: []string{"coder", "coder-b", "reviewer", "scripted"}, typ: "Plan", agent: "reviewer", kind: blackboard.GrantReview},
		{name: "exclusive to the lowest name", live: []string{"coder", "coder-b", "scripted"}, typ: "Build", agent: "coder", kind: blackboard.GrantExclusive},
		{name: "an absent consumer: the orchestrator decides", live: []string{"coder", "reviewer", "scripted"}, typ: "Plan"},
		{name: "a bid script's agent is asked: the orchestrator decides", live: []string{"coder", "coder-b", "reviewer", "scripted"}, typ: "Script"},
		{name: "nobody consumes: no plan", live: []string{"coder", "coder-b", "reviewer", "scripted"}, typ: "Other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := creator(tc.live...)
			role := "user"
			if tc.typ != "Script" {
				role = "scripted" // the scripted agent never bids on its own outputs
			}
			plan := planBids(c.dir, rules, tc.typ, role)
			gp := c.grantPlan(plan, tc.typ, role)
			if tc.agent == "" {
				if gp != nil {
					t.Fatalf("grantPlan = %+v, want none", gp)
				}
				return
			}
			if gp == nil || gp.Agent != tc.agent || gp.Kind != tc.kind || len(gp.Expect) != len(plan.Bidders) {
				t.Fatalf("grantPlan = %+v, want %s granted %s with every bidder's bid predicted", gp, tc.agent, tc.kind)
			}
		})
	}
}

// TestDecideRulesRecordsRuleBids: with orchestrator.decide_rule_bids, the
// claim and exclusive bids that rules alone give are recorded instead of
// asked; reviewers and bid scripts are still asked, ignores stay ignores.
func TestDecideRulesRecordsRuleBids(t *testing.T) {
	t.Parallel()
	rules := map[string]bidding.Rules{
		"coder":    {Role: "coder", Strategy: blackboard.BidExclusive, Consumes: []string{"Plan"}},
		"coder-b":  {Role: "coder", Strategy: blackboard.BidExclusive},
		"coder-c":  {Role: "coder", Strategy: blackboard.BidExclusive},
		"helper":   {Role: "helper", Strategy: blackboard.BidClaim},
		"reviewer": {Role: "reviewer", Strategy: blackboard.BidReview, Consumes: []string{"Plan"}},
		"scripted": {Role: "scripted", Strategy: blackboard.BidClaim, HasScript: true},
	}
	for _, tc := range []struct {
		name    string
		in      bidPlan
		want    bidPlan
		event   map[string]string
		decided map[string]blackboard.Bid
	}{
		{"mixed", bidPlan{Bidders: []string{"coder", "helper", "reviewer", "scripted"}, Ignoring: []string{"writer"}, Absent: []string{"gone"}},
			bidPlan{Bidders: []string{"reviewer", "scripted"}, Ignoring: []string{"writer"}, Absent: []string{"gone"},
				Decided: map[string]blackboard.Bid{"coder": blackboard.BidExclusive, "helper": blackboard.BidClaim}},
			map[string]string{"ignore": "writer", "bids": "coder=exclusive,helper=claim",
				"reason": "the agents' rules exclude this artefact or decide their bids"},
			map[string]blackboard.Bid{"writer": blackboard.BidIgnore, "coder": blackboard.BidExclusive, "helper": blackboard.BidClaim}},
		{"all decided", bidPlan{Bidders: []string{"helper", "coder"}},
			bidPlan{Decided: map[string]blackboard.Bid{"coder": blackboard.BidExclusive, "helper": blackboard.BidClaim}},
			map[string]string{"bids": "coder=exclusive,helper=claim", "reason": "the agents' rules decide their bids"},
			map[string]blackboard.Bid{"coder": blackboard.BidExclusive, "helper": blackboard.BidClaim}},
		{"only the lowest exclusive bid is stored", bidPlan{Bidders: []string{"coder-c", "helper", "coder", "coder-b"}},
			bidPlan{Decided: map[string]blackboard.Bid{"coder": blackboard.BidExclusive, "helper": blackboard.BidClaim},
				Outranked: []string{"coder-b", "coder-c"}},
			map[string]string{"bids": "coder-b=exclusive,coder-c=exclusive,coder=exclusive,helper=claim", "reason": "the agents' rules decide their bids"},
			map[string]blackboard.Bid{"coder": blackboard.BidExclusive, "helper": blackboard.BidClaim}},
		{"an agent without rules is asked", bidPlan{Bidders: []string{"unknown", "scripted"}},
			bidPlan{Bidders: []string{"unknown", "scripted"}}, nil, map[string]blackboard.Bid{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in.decideRules(rules, "Plan", "writer")
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decideRules = %+v, want %+v", got, tc.want)
			}
			ev := got.event("c", "a", "w")
			switch {
			case tc.event == nil && ev != nil:
				t.Errorf("event = %+v, want none", ev)
			case tc.event != nil && (len(ev) != 1 || !reflect.DeepEqual(ev[0].Fields, tc.event)):
				t.Errorf("event = %+v, want fields %v", ev, tc.event)
			}
			if d := got.decided(); !reflect.DeepEqual(d, tc.decided) {
				t.Errorf("decided() = %v, want %v", d, tc.decided)
			}
		})
	}
}

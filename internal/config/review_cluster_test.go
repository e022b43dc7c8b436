package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/reviewpolicy"
)

// TestSeed003Pipeline keeps examples/seed003-pipeline.yml loading cleanly
// and picking each example cluster for its artefact type, each
// deciding its own decision-table rows in the one instance.
func TestSeed003Pipeline(t *testing.T) {
	cfg, warnings, err := Load("../../examples/seed003-pipeline.yml")
	if err != nil || len(warnings) != 0 {
		t.Fatalf("examples/seed003-pipeline.yml: %v %q", err, warnings)
	}
	cs := cfg.Orchestrator.Clusters()
	for typ, want := range map[string]string{"Plan": "critique", "CodeChange": "verification", "ReleaseCandidate": "release", "GoalDefined": reviewpolicy.DefaultClusterName} {
		if got := cs.For(typ).Name; got != want {
			t.Errorf("cluster for %s = %s, want %s", typ, got, want)
		}
	}
	review := func(agent, status, severity string) reviewpolicy.Review {
		a, ok := cfg.Agent(agent)
		if !ok || a.BiddingStrategy != BidReview {
			t.Fatalf("agent %s missing or not a reviewer", agent)
		}
		if status == "missing" {
			return reviewpolicy.Review{Agent: agent, Role: a.Review.Role(), State: reviewpolicy.StateMissing}
		}
		payload := fmt.Sprintf(`{"status":%q,"severity":%q}`, status, severity)
		return reviewpolicy.Review{Agent: agent, Role: a.Review.Role(), State: reviewpolicy.StateDelivered, Verdict: reviewpolicy.Judge(payload, nil)}
	}
	tests := []struct {
		name      string
		typ       string
		reviews   [][3]string
		revisions int // versions already sent back
		want      reviewpolicy.Outcome
		wantRule  reviewpolicy.Rule
	}{
		// The CT table.
		{name: "CT: all Low or Medium proceeds", typ: "Plan", want: reviewpolicy.OutcomeProceed, wantRule: reviewpolicy.RuleProceed,
			reviews: [][3]string{{"ct-security", "DONE", "Low"}, {"ct-scalability", "DONE", "Medium"}, {"ct-maintainability", "DONE", "Low"}, {"ct-strategy", "DONE", "Low"}}},
		{name: "CT: a High reworks", typ: "Plan", want: reviewpolicy.OutcomeRework, wantRule: reviewpolicy.RuleReworkAt,
			reviews: [][3]string{{"ct-security", "DONE", "High"}, {"ct-scalability", "DONE", "Low"}, {"ct-maintainability", "ERROR", ""}, {"ct-strategy", "missing", ""}}},
		{name: "CT: one usable review fails", typ: "Plan", want: reviewpolicy.OutcomeFail, wantRule: reviewpolicy.RuleQuorum,
			reviews: [][3]string{{"ct-security", "DONE", "Low"}, {"ct-scalability", "ERROR", ""}, {"ct-maintainability", "ERROR", ""}, {"ct-strategy", "missing", ""}}},
		{name: "CT: a Critical at its revision limit proceeds with a warning", typ: "Plan", revisions: 1, want: reviewpolicy.OutcomeProceed, wantRule: reviewpolicy.RuleAtLimit,
			reviews: [][3]string{{"ct-security", "NEEDS_REVISION", "Critical"}, {"ct-scalability", "DONE", "Low"}, {"ct-maintainability", "DONE", "Low"}, {"ct-strategy", "DONE", "Low"}}},
		// The V table.
		{name: "V: all DONE proceeds", typ: "CodeChange", want: reviewpolicy.OutcomeProceed, wantRule: reviewpolicy.RuleProceed,
			reviews: [][3]string{{"v-build", "DONE", "PASS"}, {"v-tests", "DONE", "PASS"}, {"v-tasks", "DONE", "PASS"}, {"v-feature", "DONE", "PASS"}}},
		{name: "V: tests NEEDS_REVISION reworks", typ: "CodeChange", want: reviewpolicy.OutcomeRework, wantRule: reviewpolicy.RuleReworkAt,
			reviews: [][3]string{{"v-build", "DONE", "PASS"}, {"v-tests", "NEEDS_REVISION", "FAIL"}, {"v-tasks", "DONE", "PASS"}, {"v-feature", "DONE", "PASS"}}},
		{name: "V: one ERROR besides build proceeds", typ: "CodeChange", want: reviewpolicy.OutcomeProceed, wantRule: reviewpolicy.RuleProceed,
			reviews: [][3]string{{"v-build", "DONE", "PASS"}, {"v-tests", "ERROR", ""}, {"v-tasks", "DONE", "PASS"}, {"v-feature", "DONE", "PASS"}}},
		{name: "V: two missing or ERROR fail", typ: "CodeChange", want: reviewpolicy.OutcomeFail, wantRule: reviewpolicy.RuleMaxMissing,
			reviews: [][3]string{{"v-build", "DONE", "PASS"}, {"v-tests", "ERROR", ""}, {"v-tasks", "missing", ""}, {"v-feature", "DONE", "PASS"}}},
		{name: "V: a build FAIL decides alone (gate)", typ: "CodeChange", want: reviewpolicy.OutcomeFail, wantRule: reviewpolicy.RuleGate,
			reviews: [][3]string{{"v-build", "DONE", "FAIL"}, {"v-tests", "DONE", "PASS"}, {"v-tasks", "DONE", "PASS"}, {"v-feature", "DONE", "PASS"}}},
		{name: "V: a build ERROR decides alone (gate)", typ: "CodeChange", want: reviewpolicy.OutcomeFail, wantRule: reviewpolicy.RuleGate,
			reviews: [][3]string{{"v-build", "ERROR", ""}, {"v-tests", "DONE", "PASS"}, {"v-tasks", "DONE", "PASS"}, {"v-feature", "DONE", "PASS"}}},
		// The R table.
		{name: "R: all Minor proceeds", typ: "ReleaseCandidate", want: reviewpolicy.OutcomeProceed, wantRule: reviewpolicy.RuleProceed,
			reviews: [][3]string{{"r-security", "DONE", "Minor"}, {"r-quality", "DONE", "Minor"}, {"r-testing", "DONE", "Minor"}, {"r-knowledge", "ERROR", ""}}},
		{name: "R: security Blocker fails", typ: "ReleaseCandidate", want: reviewpolicy.OutcomeFail, wantRule: reviewpolicy.RuleBlocking,
			reviews: [][3]string{{"r-security", "DONE", "Blocker"}, {"r-quality", "DONE", "Minor"}, {"r-testing", "DONE", "Minor"}, {"r-knowledge", "DONE", "Minor"}}},
		{name: "R: a CT severity (Low) is flagged and counts as Blocker for the blocking reviewer", typ: "ReleaseCandidate", want: reviewpolicy.OutcomeFail, wantRule: reviewpolicy.RuleBlocking,
			reviews: [][3]string{{"r-security", "DONE", "Low"}, {"r-quality", "DONE", "Minor"}, {"r-testing", "DONE", "Minor"}, {"r-knowledge", "DONE", "Minor"}}},
		{name: "R: security missing fails", typ: "ReleaseCandidate", want: reviewpolicy.OutcomeFail, wantRule: reviewpolicy.RuleRequired,
			reviews: [][3]string{{"r-security", "missing", ""}, {"r-quality", "DONE", "Minor"}, {"r-testing", "DONE", "Minor"}, {"r-knowledge", "DONE", "Minor"}}},
		{name: "R: Major reworks, at_limit fail leaves the rework to the limit check", typ: "ReleaseCandidate", revisions: 3, want: reviewpolicy.OutcomeRework, wantRule: reviewpolicy.RuleReworkAt,
			reviews: [][3]string{{"r-security", "DONE", "Minor"}, {"r-quality", "DONE", "Major"}, {"r-testing", "DONE", "Minor"}, {"r-knowledge", "DONE", "Minor"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cs.For(tt.typ)
			var reviews []reviewpolicy.Review
			for _, r := range tt.reviews {
				reviews = append(reviews, review(r[0], r[1], r[2]))
			}
			d := c.ApplyLimit(reviewpolicy.Decide(c.Policy, reviews), tt.revisions, c.RevisionLimit(cfg.Orchestrator.ReviewIterationLimit()))
			if d.Outcome != tt.want || d.Rule != tt.wantRule {
				t.Fatalf("%s decided %s (%s), want %s (%s)\n%s", c.Name, d.Outcome, d.Rule, tt.want, tt.wantRule, d.Line())
			}
		})
	}
	// Without clusters, the same CT Low under the release taxonomy is the
	// trap of issue 28: here it stays in the critique cluster.
	if got := cs.For("Plan").Policy.Severities[3]; got != "Low" {
		t.Errorf("critique taxonomy %v", cs.For("Plan").Policy.Severities)
	}
}

func TestReviewClustersValidate(t *testing.T) {
	base := []string{
		`version: "1.0"`,
		`agents:`,
		`  planner: {command: [sett-writer], consumes: [GoalDefined]}`,
		`  rev-a: {command: [x], bidding_strategy: review, consumes: [Plan]}`,
		`  rev-b: {command: [x], bidding_strategy: review, consumes: [Plan]}`,
		`orchestrator:`,
		`  review_clusters:`,
	}
	tests := []struct {
		name     string
		lines    []string
		wantPath string
		wantMsg  string
	}{
		{name: "no artefact types", lines: []string{`    c: {policy: {}}`}, wantPath: "orchestrator.review_clusters.c.artefact_types", wantMsg: "is empty"},
		{name: "a type in two clusters", lines: []string{`    a: {artefact_types: [Plan]}`, `    b: {artefact_types: [Plan]}`},
			wantPath: "orchestrator.review_clusters.b.artefact_types[0]", wantMsg: "already reviewed by cluster a"},
		{name: "the reserved name", lines: []string{`    default: {artefact_types: [Plan]}`}, wantPath: "orchestrator.review_clusters.default", wantMsg: "reserved"},
		{name: "a bad name", lines: []string{`    Bad Name: {artefact_types: [Plan]}`}, wantPath: "orchestrator.review_clusters.Bad Name", wantMsg: "not a valid cluster name"},
		{name: "an unknown reviewer", lines: []string{`    c: {artefact_types: [Plan], reviewers: [rev-a, rev-z]}`}, wantPath: "orchestrator.review_clusters.c.reviewers[1]", wantMsg: `"rev-z" is not a configured agent`},
		{name: "a reviewer that never reviews", lines: []string{`    c: {artefact_types: [Plan], reviewers: [planner]}`}, wantPath: "orchestrator.review_clusters.c.reviewers[0]", wantMsg: "never reviews"},
		{name: "a gate outside the reviewers", lines: []string{`    c: {artefact_types: [Plan], reviewers: [rev-a], gate: [rev-b]}`}, wantPath: "orchestrator.review_clusters.c.gate[0]", wantMsg: "not one of the cluster's reviewers"},
		{name: "an unknown gate", lines: []string{`    c: {artefact_types: [Plan], gate: [nobody]}`}, wantPath: "orchestrator.review_clusters.c.gate[0]", wantMsg: "not a configured agent"},
		{name: "a bad at_limit", lines: []string{`    c: {artefact_types: [Plan], at_limit: continue}`}, wantPath: "orchestrator.review_clusters.c.at_limit", wantMsg: "use fail or proceed"},
		{name: "a negative max_revisions", lines: []string{`    c: {artefact_types: [Plan], max_revisions: -1}`}, wantPath: "orchestrator.review_clusters.c.max_revisions", wantMsg: "not valid"},
		{name: "a policy problem names the cluster", lines: []string{`    c: {artefact_types: [Plan], policy: {severities: [A, B], rework_at: C, fail_at: A}}`},
			wantPath: "orchestrator.review_clusters.c.policy.rework_at", wantMsg: `"C" is not one of the severities`},
		{name: "a bad on_error", lines: []string{`    c: {artefact_types: [Plan], on_error: retry}`}, wantPath: "orchestrator.review_clusters.c.on_error", wantMsg: "use fail or replan"},
		{name: "replan without a type", lines: []string{`    c: {artefact_types: [CodeChange], on_error: replan}`}, wantPath: "orchestrator.review_clusters.c.replan_type", wantMsg: "needs the artefact type to send back"},
		{name: "replan of the cluster's own type", lines: []string{`    c: {artefact_types: [Plan], on_error: replan, replan_type: Plan}`}, wantPath: "orchestrator.review_clusters.c.replan_type", wantMsg: "name an upstream type"},
		{name: "replan_type without replan", lines: []string{`    c: {artefact_types: [CodeChange], replan_type: Plan}`}, wantPath: "orchestrator.review_clusters.c.on_error", wantMsg: "apply only with on_error: replan"},
		{name: "max_replans 0", lines: []string{`    c: {artefact_types: [CodeChange], on_error: replan, replan_type: Plan, max_replans: 0}`}, wantPath: "orchestrator.review_clusters.c.max_replans", wantMsg: "use 1 or more"},
		{name: "an unknown key", lines: []string{`    c: {artefact_types: [Plan], severities: [A]}`}, wantPath: "orchestrator.review_clusters.c", wantMsg: `unknown key "severities"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := doc(append(append([]string(nil), base...), tt.lines...)...)
			_, _, err := Parse(data, "sett.yml")
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", data)
			}
			if !strings.Contains(err.Error(), tt.wantPath) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %v\nwant %s: ...%s", err, tt.wantPath, tt.wantMsg)
			}
		})
	}
}

func TestReviewClusterWarnings(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string // substring of a warning; "" for none
	}{
		{name: "min_reviews above the reviewers", lines: []string{
			`orchestrator: {review_policy: {min_reviews: 3}}`,
			`agents:`,
			`  a: {command: [x], bidding_strategy: review}`,
			`  b: {command: [x], bidding_strategy: review}`,
		}, want: "orchestrator.review_policy.min_reviews: 3 is more than the 2 non-advisory reviewers"},
		{name: "min_reviews above a cluster's reviewers", lines: []string{
			`orchestrator: {review_clusters: {c: {artefact_types: [Plan], policy: {min_reviews: 2}}}}`,
			`agents:`,
			`  a: {command: [x], bidding_strategy: review, consumes: [Plan]}`,
			`  b: {command: [x], bidding_strategy: review, consumes: [Code]}`,
		}, want: "orchestrator.review_clusters.c.policy.min_reviews: 2 is more than the 1 non-advisory reviewers that can give a review (a)"},
		{name: "fail_at without a blocking reviewer", lines: []string{
			`orchestrator: {review_policy: {fail_at: Major}}`,
			`agents:`,
			`  a: {command: [x], bidding_strategy: review}`,
		}, want: "orchestrator.review_policy.fail_at: Major does nothing: no reviewer of a is blocking"},
		{name: "fail_at with a blocking reviewer", lines: []string{
			`orchestrator: {review_policy: {fail_at: Major}}`,
			`agents:`,
			`  a: {command: [x], bidding_strategy: review, review: {blocking: true}}`,
		}},
		{name: "sett-reviewer approvals under severity_required", lines: []string{
			`orchestrator: {review_policy: {severity_required: true}}`,
			`agents:`,
			`  a: {command: [sett-reviewer], bidding_strategy: review}`,
		}, want: `agents.a.command: sett-reviewer approves with {"verdict": "approve"} and no severity, which orchestrator.review_policy (severity_required) counts as Blocker`},
		{name: "sett-reviewer with an approval severity", lines: []string{
			`orchestrator: {review_policy: {severity_required: true}}`,
			`agents:`,
			`  a: {command: [sett-reviewer, --approve-severity, Minor], bidding_strategy: review}`,
		}},
		{name: "a cluster nobody reviews", lines: []string{
			`orchestrator: {review_clusters: {c: {artefact_types: [Plan]}}}`,
			`agents:`,
			`  a: {command: [x], bidding_strategy: review, consumes: [Code]}`,
		}, want: "orchestrator.review_clusters.c.policy: no agent reviews this cluster's artefact types"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := doc(append([]string{`version: "1.0"`}, tt.lines...)...)
			_, warnings, err := Parse(data, "sett.yml")
			if err != nil {
				t.Fatalf("Parse: %v\n%s", err, data)
			}
			all := strings.Join(warnings, "\n")
			if tt.want == "" {
				if len(warnings) != 0 {
					t.Fatalf("warnings %q, want none", warnings)
				}
				return
			}
			if !strings.Contains(all, tt.want) {
				t.Fatalf("warnings:\n%s\nwant one containing %q", all, tt.want)
			}
		})
	}
}

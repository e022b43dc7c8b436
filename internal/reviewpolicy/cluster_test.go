package reviewpolicy

import (
	"strings"
	"testing"
)

func TestClustersFor(t *testing.T) {
	cs := Clusters{
		Default: Cluster{Name: DefaultClusterName},
		Named: []Cluster{
			{Name: "critique", ArtefactTypes: []string{"Plan", "Design"}},
			{Name: "verification", ArtefactTypes: []string{"CodeChange"}},
			{Name: "release", ArtefactTypes: []string{"Release", "Plan"}},
		},
	}
	tests := []struct {
		name, artefactType, want string
	}{
		{name: "a listed type", artefactType: "CodeChange", want: "verification"},
		{name: "the second type of a cluster", artefactType: "Design", want: "critique"},
		{name: "the first cluster listing a type wins", artefactType: "Plan", want: "critique"},
		{name: "an unlisted type goes to the default", artefactType: "Notes", want: DefaultClusterName},
		{name: "types compare exactly", artefactType: "plan", want: DefaultClusterName},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cs.For(tt.artefactType).Name; got != tt.want {
				t.Fatalf("For(%q) = %s, want %s", tt.artefactType, got, tt.want)
			}
		})
	}
	if got := (Clusters{}).For("Plan").Name; got != "" {
		t.Errorf("zero Clusters: %q, want the zero default", got)
	}
}

func TestClusterApplyLimit(t *testing.T) {
	one := 1
	rework := Decision{Outcome: OutcomeRework, Rule: RuleReworkAt, Reason: "ct-security (High) at or above rework_at High", Rejecting: []string{"ct-security"}}
	proceed := Cluster{Name: "critique", MaxRevisions: &one, AtLimit: AtLimitProceed}
	tests := []struct {
		name        string
		cluster     Cluster
		d           Decision
		revisions   int
		limit       int
		wantOutcome Outcome
		wantRule    Rule
		wantWarning bool
	}{
		{name: "below the limit the rework stands", cluster: proceed, d: rework, revisions: 0, limit: 1, wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		{name: "at the limit with proceed: proceed with a warning", cluster: proceed, d: rework, revisions: 1, limit: 1, wantOutcome: OutcomeProceed, wantRule: RuleAtLimit, wantWarning: true},
		{name: "beyond the limit with proceed: proceed with a warning", cluster: proceed, d: rework, revisions: 4, limit: 1, wantOutcome: OutcomeProceed, wantRule: RuleAtLimit, wantWarning: true},
		{name: "at the limit with fail: the rework stands (the rework step fails it)", cluster: Cluster{Name: "c", AtLimit: AtLimitFail}, d: rework, revisions: 1, limit: 1, wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		{name: "at the limit, at_limit unset: as fail", cluster: Cluster{Name: "c"}, d: rework, revisions: 3, limit: 3, wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		{name: "no limit: never", cluster: proceed, d: rework, revisions: 99, limit: 0, wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		{name: "a failure is not touched", cluster: proceed, d: Decision{Outcome: OutcomeFail, Rule: RuleBlocking}, revisions: 5, limit: 1, wantOutcome: OutcomeFail, wantRule: RuleBlocking},
		{name: "a proceed is not touched", cluster: proceed, d: Decision{Outcome: OutcomeProceed, Rule: RuleProceed}, revisions: 5, limit: 1, wantOutcome: OutcomeProceed, wantRule: RuleProceed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.cluster.ApplyLimit(tt.d, tt.revisions, tt.limit)
			if d.Outcome != tt.wantOutcome || d.Rule != tt.wantRule || d.Warning != tt.wantWarning {
				t.Fatalf("ApplyLimit = %s (%s) warning %v; want %s (%s) warning %v", d.Outcome, d.Rule, d.Warning, tt.wantOutcome, tt.wantRule, tt.wantWarning)
			}
			if d.Warning {
				if !strings.Contains(d.Reason, "revision limit 1 of cluster critique reached") || !strings.Contains(d.Reason, "ct-security (High)") ||
					len(d.Rejecting) != 1 || !strings.Contains(d.Line(), "[warning]") {
					t.Errorf("decision %+v; want the limit, the cluster and the asking review named", d)
				}
			}
		})
	}
}

func TestClusterRevisionLimit(t *testing.T) {
	one := 1
	if got := (Cluster{}).RevisionLimit(3); got != 3 {
		t.Errorf("unset: %d, want the global 3", got)
	}
	if got := (Cluster{MaxRevisions: &one}).RevisionLimit(3); got != 1 {
		t.Errorf("set: %d, want 1", got)
	}
}

// TestDecideGate: the build verifier gate. A gate reviewer that fails
// decides alone and the other reviews are skipped.
func TestDecideGate(t *testing.T) {
	p := Policy{Severities: []string{"FAIL", "PASS"}, ReworkAt: "FAIL", FailAt: "FAIL", MaxMissing: ptr(1), ReworkOnReject: true, Gate: []string{"v-build"}}
	v := func(build, tests, tasks, feature [2]string) []Review {
		return []Review{
			review("v-tests", Role{}, tests[0], tests[1]),
			review("v-tasks", Role{}, tasks[0], tasks[1]),
			review("v-feature", Role{}, feature[0], feature[1]),
			review("v-build", Role{Required: true}, build[0], build[1]),
		}
	}
	pass, fail, nrv := [2]string{"DONE", "PASS"}, [2]string{"DONE", "FAIL"}, [2]string{"NEEDS_REVISION", "FAIL"}
	er, miss := [2]string{"ERROR", ""}, [2]string{"missing", ""}
	runDecide(t, p, []decideCase{
		{name: "build PASS, all pass → proceed", reviews: v(pass, pass, pass, pass), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "build PASS, tests NR → rework", reviews: v(pass, nrv, pass, pass), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"v-tests"}},
		{name: "build FAIL skips the others", reviews: v(fail, nrv, er, pass), wantOutcome: OutcomeFail, wantRule: RuleGate, wantRejecting: []string{"v-build"},
			wantReason: "gate reviewer v-build reported FAIL; the other reviews are skipped (v-feature, v-tasks, v-tests)"},
		{name: "build NEEDS_REVISION skips the others", reviews: v(nrv, pass, pass, pass), wantOutcome: OutcomeFail, wantRule: RuleGate, wantReason: "gate reviewer v-build rejects"},
		{name: "build ERROR fails by the gate", reviews: v(er, pass, pass, pass), wantOutcome: OutcomeFail, wantRule: RuleGate, wantRejecting: []string{}, wantReason: "no usable review (status ERROR)"},
		{name: "build missing fails by the gate", reviews: v(miss, pass, pass, pass), wantOutcome: OutcomeFail, wantRule: RuleGate, wantReason: "(missing)"},
	})
}

func ptr(n int) *int { return &n }

func TestClusterApplyOnError(t *testing.T) {
	v := Cluster{Name: "verification", OnError: OnErrorReplan, ReplanType: "Plan", MaxReplans: 3}
	fail := func(r Rule) Decision {
		return Decision{Outcome: OutcomeFail, Rule: r, Reason: "gate reviewer v-build rejects (NEEDS_REVISION)"}
	}
	tests := []struct {
		name     string
		c        Cluster
		d        Decision
		replans  int
		want     Outcome
		wantRule Rule
		warning  bool
		reason   string
	}{
		{name: "a gate failure replans", c: v, d: fail(RuleGate), want: OutcomeReplan, wantRule: RuleGate, reason: "replan 1 of 3 (on_error: replan): back to the producer of the Plan"},
		{name: "a required ERROR replans", c: v, d: fail(RuleRequired), replans: 1, want: OutcomeReplan, wantRule: RuleRequired, reason: "replan 2 of 3"},
		{name: "too many missing replans", c: v, d: fail(RuleMaxMissing), replans: 2, want: OutcomeReplan, wantRule: RuleMaxMissing, reason: "replan 3 of 3"},
		{name: "too few reviews replans", c: v, d: fail(RuleQuorum), want: OutcomeReplan, wantRule: RuleQuorum},
		{name: "after the third replan the work moves on with a warning", c: v, d: fail(RuleGate), replans: 3,
			want: OutcomeProceed, wantRule: RuleAtLimit, warning: true, reason: "replan limit 3 of cluster verification reached"},
		{name: "a blocking verdict always fails", c: v, d: fail(RuleBlocking), want: OutcomeFail, wantRule: RuleBlocking},
		{name: "an invalid policy always fails", c: v, d: fail(RuleInvalidPolicy), want: OutcomeFail, wantRule: RuleInvalidPolicy},
		{name: "a rework is no error", c: v, d: Decision{Outcome: OutcomeRework, Rule: RuleReworkAt}, want: OutcomeRework, wantRule: RuleReworkAt},
		{name: "a proceed is left alone", c: v, d: Decision{Outcome: OutcomeProceed, Rule: RuleProceed}, want: OutcomeProceed, wantRule: RuleProceed},
		{name: "on_error fail fails", c: Cluster{Name: "release", OnError: OnErrorFail}, d: fail(RuleGate), want: OutcomeFail, wantRule: RuleGate},
		{name: "the zero cluster fails", c: Cluster{}, d: fail(RuleRequired), want: OutcomeFail, wantRule: RuleRequired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.c.ApplyOnError(tt.d, tt.replans)
			if got.Outcome != tt.want || got.Rule != tt.wantRule || got.Warning != tt.warning || !strings.Contains(got.Reason, tt.reason) {
				t.Fatalf("ApplyOnError = %s/%s warning=%v %q, want %s/%s warning=%v containing %q",
					got.Outcome, got.Rule, got.Warning, got.Reason, tt.want, tt.wantRule, tt.warning, tt.reason)
			}
		})
	}
}

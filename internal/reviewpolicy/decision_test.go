package reviewpolicy

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/memory"
)

// review builds one review. status is DONE, NEEDS_REVISION, ERROR, or
// "missing" / "failed" for a review that was not delivered.
func review(agent string, role Role, status string, severity string) Review {
	switch status {
	case "missing":
		return Review{Agent: agent, Role: role, State: StateMissing}
	case "failed":
		return Review{Agent: agent, Role: role, State: StateFailed}
	}
	return Review{Agent: agent, Role: role, State: StateDelivered,
		Verdict: Verdict{Status: memory.Status(status), Severity: severity, Basis: BasisMemory, Reason: "test"}}
}

// decideCase is one row of a cluster table.
type decideCase struct {
	name          string
	reviews       []Review
	wantOutcome   Outcome
	wantRule      Rule
	wantRejecting []string // nil: not checked
	wantGaps      int      // number of contract gaps
	wantReason    string   // substring of Reason; "" not checked
}

func runDecide(t *testing.T, p Policy, tests []decideCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(p, tt.reviews)
			if d.Outcome != tt.wantOutcome || d.Rule != tt.wantRule {
				t.Fatalf("Decide = %s (%s): %s\nwant %s (%s)\n%s", d.Outcome, d.Rule, d.Reason, tt.wantOutcome, tt.wantRule, d.Line())
			}
			if tt.wantRejecting != nil && !slices.Equal(d.Rejecting, tt.wantRejecting) {
				t.Errorf("Rejecting = %q, want %q", d.Rejecting, tt.wantRejecting)
			}
			if len(d.ContractGaps) != tt.wantGaps {
				t.Errorf("ContractGaps = %q, want %d", d.ContractGaps, tt.wantGaps)
			}
			if !strings.Contains(d.Reason, tt.wantReason) {
				t.Errorf("Reason = %q, want it to contain %q", d.Reason, tt.wantReason)
			}
			if len(d.ReviewsRead) != len(tt.reviews) {
				t.Errorf("read %d reviews, want %d", len(d.ReviewsRead), len(tt.reviews))
			}
		})
	}
}

// critiquePolicy is the memory and review design's CT cluster: four reviewers, at least two
// usable, any Critical or High → rework.
func critiquePolicy() Policy {
	return Policy{Severities: []string{"Critical", "High", "Medium", "Low"}, ReworkAt: "High", FailAt: "Critical", MinReviews: 2, SeverityRequired: true}
}

func ct(security, scalability, maintainability, strategy [2]string) []Review {
	return []Review{
		review("ct-security", Role{}, security[0], security[1]),
		review("ct-scalability", Role{}, scalability[0], scalability[1]),
		review("ct-maintainability", Role{}, maintainability[0], maintainability[1]),
		review("ct-strategy", Role{}, strategy[0], strategy[1]),
	}
}

func TestDecideCritiqueCluster(t *testing.T) {
	low, med, high, crit := [2]string{"DONE", "Low"}, [2]string{"DONE", "Medium"}, [2]string{"DONE", "High"}, [2]string{"DONE", "Critical"}
	er, miss, fail := [2]string{"ERROR", ""}, [2]string{"missing", ""}, [2]string{"failed", ""}
	runDecide(t, critiquePolicy(), []decideCase{
		{name: "all low or medium → proceed", reviews: ct(low, med, low, med), wantOutcome: OutcomeProceed, wantRule: RuleProceed, wantRejecting: []string{}, wantReason: "4 usable reviews, none at or above rework_at High"},
		{name: "one High → rework", reviews: ct(high, low, med, low), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"ct-security"}, wantReason: "ct-security (High) at or above rework_at High"},
		{name: "one Critical → rework (no blocking reviewer)", reviews: ct(low, crit, low, low), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"ct-scalability"}},
		{name: "Critical and High → rework naming both", reviews: ct(crit, high, low, low), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"ct-scalability", "ct-security"}, wantReason: "ct-scalability (High), ct-security (Critical)"},
		{name: "severity case does not matter", reviews: ct([2]string{"DONE", "high"}, low, low, low), wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		{name: "two ERROR, two usable → quorum met, proceed", reviews: ct(er, er, low, med), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "two missing, High among the rest → rework", reviews: ct(miss, fail, high, low), wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		{name: "one usable → fail even with High", reviews: ct(er, miss, fail, high), wantOutcome: OutcomeFail, wantRule: RuleQuorum, wantReason: "1 usable review from non-advisory reviewers, fewer than min_reviews 2"},
		{name: "none usable → fail", reviews: ct(miss, miss, miss, miss), wantOutcome: OutcomeFail, wantRule: RuleQuorum},
		{name: "unknown severity counts as Critical, a gap", reviews: ct([2]string{"DONE", "Severe"}, low, low, low), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantGaps: 1},
		{name: "missing severity counts as Critical (severity_required), a gap", reviews: ct([2]string{"DONE", ""}, low, low, low), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantGaps: 1},
		{name: "N/A is a missing severity", reviews: ct(low, [2]string{"DONE", "N/A"}, low, low), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantGaps: 1},
	})
}

// verificationPolicy is the memory and review design's V cluster: the build verifier's ERROR
// fails, one other ERROR proceeds with the rest, two or more missing or
// ERROR fail, any NEEDS_REVISION reworks.
func verificationPolicy() Policy {
	one := 1
	return Policy{Severities: []string{"FAIL", "PASS"}, ReworkAt: "FAIL", FailAt: "FAIL", MinReviews: 1, MaxMissing: &one, ReworkOnReject: true}
}

func v(build, tests, tasks, feature string) []Review {
	return []Review{
		review("v-build", Role{Required: true}, build, ""),
		review("v-tests", Role{}, tests, ""),
		review("v-tasks", Role{}, tasks, ""),
		review("v-feature", Role{}, feature, ""),
	}
}

// TestDecideVerificationCluster has every row of the memory and review design's V decision
// table, with "any" and "!ERROR" spelled out in representative ways.
func TestDecideVerificationCluster(t *testing.T) {
	const D, N, E = "DONE", "NEEDS_REVISION", "ERROR"
	runDecide(t, verificationPolicy(), []decideCase{
		// | DONE | DONE | DONE | DONE | DONE |
		{name: "row 1: all DONE → proceed", reviews: v(D, D, D, D), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		// | DONE | NR | any | any | NR |
		{name: "row 2: tests NR → rework", reviews: v(D, N, D, D), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"v-tests"}},
		{name: "row 2: tests NR, tasks ERROR → rework", reviews: v(D, N, E, D), wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		{name: "row 2: tests NR, all NR → rework", reviews: v(D, N, N, N), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"v-feature", "v-tasks", "v-tests"}},
		// | DONE | any | NR | any | NR |
		{name: "row 3: tasks NR → rework", reviews: v(D, D, N, D), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"v-tasks"}},
		{name: "row 3: tasks NR, tests ERROR → rework", reviews: v(D, E, N, D), wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		// | DONE | any | any | NR | NR |
		{name: "row 4: feature NR → rework", reviews: v(D, D, D, N), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"v-feature"}},
		{name: "row 4: feature NR, tests missing → rework", reviews: v(D, "missing", D, N), wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		// | ERROR | any | any | any | ERROR |
		{name: "row 5: build ERROR → fail", reviews: v(E, D, D, D), wantOutcome: OutcomeFail, wantRule: RuleRequired, wantReason: "required reviewer v-build has no usable review (status ERROR)"},
		{name: "row 5: build ERROR, others NR → fail", reviews: v(E, N, N, N), wantOutcome: OutcomeFail, wantRule: RuleRequired},
		{name: "row 5 (build missing, seed: the gate failed) → fail", reviews: v("missing", D, D, D), wantOutcome: OutcomeFail, wantRule: RuleRequired},
		{name: "row 5 (build tool failed) → fail", reviews: v("failed", D, D, D), wantOutcome: OutcomeFail, wantRule: RuleRequired, wantReason: "its tool failed"},
		// | DONE | ERROR | !ERROR | !ERROR | Proceed |
		{name: "row 6: tests ERROR → proceed with the rest", reviews: v(D, E, D, D), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "row 6: tests missing → proceed with the rest", reviews: v(D, "missing", D, D), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		// | DONE | !ERROR | ERROR | !ERROR | Proceed |
		{name: "row 7: tasks ERROR → proceed with the rest", reviews: v(D, D, E, D), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		// | DONE | !ERROR | !ERROR | ERROR | Proceed |
		{name: "row 8: feature ERROR → proceed with the rest", reviews: v(D, D, D, E), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		// | any | — | — | — | 2+ missing/ERROR → ERROR |
		{name: "row 9: two ERROR → fail", reviews: v(D, E, E, D), wantOutcome: OutcomeFail, wantRule: RuleMaxMissing, wantReason: "2 non-advisory reviews missing, failed or ERROR (v-tasks status ERROR, v-tests status ERROR), more than max_missing 1"},
		{name: "row 9: ERROR and missing → fail", reviews: v(D, "missing", D, E), wantOutcome: OutcomeFail, wantRule: RuleMaxMissing},
		{name: "row 9: three missing → fail", reviews: v(D, "missing", "failed", "missing"), wantOutcome: OutcomeFail, wantRule: RuleMaxMissing},
		{name: "row 9 wins over NR: NR and two ERROR → fail", reviews: v(D, N, E, E), wantOutcome: OutcomeFail, wantRule: RuleMaxMissing},

		// V agents also report PASS/FAIL as their highest severity.
		{name: "PASS everywhere → proceed", reviews: withSeverities(v(D, D, D, D), "PASS", "PASS", "PASS", "PASS"), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "NR with FAIL → rework", reviews: withSeverities(v(D, N, D, D), "PASS", "FAIL", "PASS", "PASS"), wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		{name: "NR even with PASS → rework (rework_on_reject)", reviews: withSeverities(v(D, D, N, D), "PASS", "PASS", "PASS", "PASS"), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantReason: "v-tasks (NEEDS_REVISION) rejecting, or at or above rework_at FAIL"},
	})
}

func withSeverities(reviews []Review, sevs ...string) []Review {
	for i := range reviews {
		reviews[i].Verdict.Severity = sevs[i]
	}
	return reviews
}

// TestDecideVerificationTableExhaustive checks every combination of the
// four V statuses (DONE, NEEDS_REVISION, ERROR, missing) against a literal
// reading of the memory and review design's table. V-Build NEEDS_REVISION is not in the table
// and is left out.
func TestDecideVerificationTableExhaustive(t *testing.T) {
	values := []string{"DONE", "NEEDS_REVISION", "ERROR", "missing"}
	bad := func(s string) bool { return s == "ERROR" || s == "missing" }
	// seedTable returns the table's result: its rows as the seed lists
	// them, "2+ missing/ERROR" guarding them all.
	seedTable := func(s [4]string) Outcome {
		nBad := 0
		for _, x := range s {
			if bad(x) {
				nBad++
			}
		}
		switch {
		case bad(s[0]): // | ERROR | any | any | any | ERROR |
			return OutcomeFail
		case nBad >= 2: // | any | — | — | — | 2+ missing/ERROR → ERROR |
			return OutcomeFail
		case slices.Contains(s[1:], "NEEDS_REVISION"): // rows 2–4
			return OutcomeRework
		default: // row 1, and rows 6–8: one other ERROR → proceed with the rest
			return OutcomeProceed
		}
	}
	n := 0
	for _, b := range []string{"DONE", "ERROR", "missing"} {
		for _, x := range values {
			for _, y := range values {
				for _, z := range values {
					s := [4]string{b, x, y, z}
					want := seedTable(s)
					if d := Decide(verificationPolicy(), v(b, x, y, z)); d.Outcome != want {
						t.Errorf("%v: %s (%s: %s), seed table says %s", s, d.Outcome, d.Rule, d.Reason, want)
					}
					n++
				}
			}
		}
	}
	if n != 3*4*4*4 {
		t.Fatalf("checked %d combinations", n)
	}
}

// releasePolicy is the memory and review design's R cluster.
func releasePolicy() Policy {
	return Policy{ReworkAt: "Major", FailAt: "Blocker", MinReviews: 2, SeverityRequired: true}
}

var (
	security  = Role{Blocking: true, Required: true}
	knowledge = Role{Advisory: true}
)

func r(sec, quality, testing, know [2]string) []Review {
	return []Review{
		review("r-knowledge", knowledge, know[0], know[1]),
		review("r-testing", Role{}, testing[0], testing[1]),
		review("r-quality", Role{}, quality[0], quality[1]),
		review("r-security", security, sec[0], sec[1]),
	}
}

func TestDecideReleaseCluster(t *testing.T) {
	minor, major, blocker := [2]string{"DONE", "Minor"}, [2]string{"DONE", "Major"}, [2]string{"DONE", "Blocker"}
	er, miss, fail := [2]string{"ERROR", ""}, [2]string{"missing", ""}, [2]string{"failed", ""}
	runDecide(t, releasePolicy(), []decideCase{
		{name: "all minor → proceed", reviews: r(minor, minor, minor, minor), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "security Blocker → fail even when the others approve", reviews: r(blocker, minor, minor, minor), wantOutcome: OutcomeFail, wantRule: RuleBlocking,
			wantReason: "blocking reviewer r-security reported Blocker, at or above fail_at Blocker"},
		{name: "security blocker in lower case → fail", reviews: r([2]string{"DONE", "blocker"}, minor, minor, minor), wantOutcome: OutcomeFail, wantRule: RuleBlocking},
		{name: "security rejecting with Blocker → fail", reviews: r([2]string{"NEEDS_REVISION", "Blocker"}, minor, minor, minor), wantOutcome: OutcomeFail, wantRule: RuleBlocking},
		{name: "security Critical counts as Blocker and is flagged → fail", reviews: r([2]string{"DONE", "Critical"}, minor, minor, minor), wantOutcome: OutcomeFail, wantRule: RuleBlocking, wantGaps: 1},
		{name: "security without severity counts as Blocker → fail", reviews: r([2]string{"DONE", ""}, minor, minor, minor), wantOutcome: OutcomeFail, wantRule: RuleBlocking, wantGaps: 1},
		{name: "security missing → fail", reviews: r(miss, minor, minor, minor), wantOutcome: OutcomeFail, wantRule: RuleRequired, wantReason: "required reviewer r-security has no usable review (missing)"},
		{name: "security ERROR → fail", reviews: r(er, minor, minor, minor), wantOutcome: OutcomeFail, wantRule: RuleRequired},
		{name: "security tool failed → fail", reviews: r(fail, minor, minor, minor), wantOutcome: OutcomeFail, wantRule: RuleRequired},
		{name: "security missing beats another's Blocker", reviews: r(miss, blocker, minor, minor), wantOutcome: OutcomeFail, wantRule: RuleRequired},
		{name: "knowledge ERROR ignored", reviews: r(minor, minor, minor, er), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "knowledge missing ignored", reviews: r(minor, minor, minor, miss), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "knowledge Blocker never decides", reviews: r(minor, minor, minor, blocker), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "quality ERROR, testing missing: 1 usable → fail", reviews: r(minor, er, miss, minor), wantOutcome: OutcomeFail, wantRule: RuleQuorum},
		{name: "knowledge does not count toward the quorum", reviews: r(minor, er, er, minor), wantOutcome: OutcomeFail, wantRule: RuleQuorum, wantReason: "1 usable review"},
		{name: "testing failed, two usable → proceed", reviews: r(minor, minor, fail, er), wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "quality Major → rework", reviews: r(minor, major, minor, minor), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"r-quality"}},
		{name: "security Major → rework, not fail", reviews: r(major, minor, minor, minor), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"r-security"}},
		{name: "knowledge's rejection goes back with the others", reviews: r(minor, major, minor, [2]string{"NEEDS_REVISION", "Minor"}), wantOutcome: OutcomeRework, wantRule: RuleReworkAt,
			wantRejecting: []string{"r-quality", "r-knowledge"}},
		{name: "quality rejecting without severity → rework, a gap", reviews: r(minor, [2]string{"NEEDS_REVISION", ""}, minor, minor), wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantGaps: 1},
	})
}

func TestDecideReadsBlockingFirst(t *testing.T) {
	reviews := r([2]string{"DONE", "Minor"}, [2]string{"DONE", "Minor"}, [2]string{"DONE", "Minor"}, [2]string{"DONE", "Minor"})
	want := []string{"r-security", "r-quality", "r-testing", "r-knowledge"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 10 {
		rng.Shuffle(len(reviews), func(a, b int) { reviews[a], reviews[b] = reviews[b], reviews[a] })
		d := Decide(releasePolicy(), reviews)
		var got []string
		for _, rr := range d.ReviewsRead {
			got = append(got, rr.Agent)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("shuffle %d: read %q, want %q", i, got, want)
		}
	}
}

func TestDecideDefaultPolicy(t *testing.T) {
	judged := func(agent, payload string) Review {
		return Review{Agent: agent, State: StateDelivered, Verdict: Judge(payload, nil)}
	}
	runDecide(t, DefaultPolicy(), []decideCase{
		{name: "approval → proceed", reviews: []Review{judged("reviewer", "{}")}, wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "reject Major → rework", reviews: []Review{judged("reviewer", `{"verdict":"reject","severity":"Major"}`)}, wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantRejecting: []string{"reviewer"}},
		{name: "reject Minor → proceed, still listed as rejecting", reviews: []Review{judged("reviewer", `{"verdict":"reject","severity":"Minor"}`)}, wantOutcome: OutcomeProceed, wantRule: RuleProceed, wantRejecting: []string{"reviewer"}},
		{name: "free text → rework, a gap", reviews: []Review{judged("reviewer", "please add tests")}, wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantGaps: 1},
		{name: "a finding's severity counts", reviews: []Review{judged("reviewer", `{"verdict":"reject","severity":"Minor","findings":[{"severity":"Major","text":"x"}]}`)}, wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		{name: "approval with a Major finding → rework", reviews: []Review{judged("reviewer", `{"verdict":"approve","severity":"Major"}`)}, wantOutcome: OutcomeRework, wantRule: RuleReworkAt},
		{name: "the only reviewer failed → fail", reviews: []Review{review("reviewer", Role{}, "failed", "")}, wantOutcome: OutcomeFail, wantRule: RuleQuorum},
		{name: "no reviews → fail", reviews: nil, wantOutcome: OutcomeFail, wantRule: RuleQuorum, wantReason: "0 usable reviews"},
		{name: "one of two failed → proceed with the other", reviews: []Review{review("a", Role{}, "failed", ""), judged("b", "{}")}, wantOutcome: OutcomeProceed, wantRule: RuleProceed},
		{name: "unreadable verdict → rework, gaps", reviews: []Review{judged("reviewer", `{"verdict":"maybe"}`)}, wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantGaps: 2},
		{name: "bad state read as missing, a gap", reviews: []Review{{Agent: "x", State: "lost"}, judged("b", "{}")}, wantOutcome: OutcomeProceed, wantRule: RuleProceed, wantGaps: 1},
		{name: "empty status read as a rejection, gaps", reviews: []Review{{Agent: "x", State: StateDelivered}}, wantOutcome: OutcomeRework, wantRule: RuleReworkAt, wantGaps: 2},
	})
}

func TestDecideInvalidPolicyFails(t *testing.T) {
	d := Decide(Policy{ReworkAt: "Huge"}, []Review{review("a", Role{}, "DONE", "")})
	if d.Outcome != OutcomeFail || d.Rule != RuleInvalidPolicy || !strings.Contains(d.Reason, `rework_at: "Huge" is not one of the severities [Blocker, Major, Minor]`) {
		t.Fatalf("Decide = %+v", d)
	}
}

func TestDecisionRecord(t *testing.T) {
	d := Decide(releasePolicy(), r([2]string{"DONE", "Critical"}, [2]string{"DONE", "major"}, [2]string{"missing", ""}, [2]string{"ERROR", ""}))
	if got, want := d.SeveritiesSeen, []string{"Critical", "Major"}; !slices.Equal(got, want) {
		t.Errorf("SeveritiesSeen = %q, want %q", got, want)
	}
	wantRead := []ReviewRead{
		{Agent: "r-security", Role: "blocking, required", State: StateDelivered, Status: done, Severity: "Critical", CountedAs: "Blocker", Usable: true},
		{Agent: "r-quality", Role: "ordinary", State: StateDelivered, Status: done, Severity: "major", CountedAs: "Major", Usable: true},
		{Agent: "r-testing", Role: "ordinary", State: StateMissing},
		{Agent: "r-knowledge", Role: "advisory", State: StateDelivered, Status: errSt},
	}
	if !slices.Equal(d.ReviewsRead, wantRead) {
		t.Errorf("ReviewsRead:\n got %+v\nwant %+v", d.ReviewsRead, wantRead)
	}
	want := `review decision: fail (blocking): blocking reviewer r-security reported Blocker, at or above fail_at Blocker ` +
		`Read: r-security DONE/Critical, r-quality DONE/major, r-testing missing, r-knowledge ERROR. ` +
		`Contract gaps: r-security: severity "Critical" is not one of [Blocker, Major, Minor]; counted as Blocker.`
	if got := d.Line(); got != want {
		t.Errorf("Line:\n got %s\nwant %s", got, want)
	}
}

func TestPolicyProblems(t *testing.T) {
	neg := -1
	tests := []struct {
		name string
		p    Policy
		want []string // "field: message substring"
	}{
		{name: "default", p: DefaultPolicy()},
		{name: "zero", p: Policy{}},
		{name: "critique", p: critiquePolicy()},
		{name: "verification", p: verificationPolicy()},
		{name: "release", p: releasePolicy()},
		{name: "rework_at unknown", p: Policy{ReworkAt: "High"}, want: []string{`rework_at: "High" is not one of the severities [Blocker, Major, Minor]`}},
		{name: "custom taxonomy needs its thresholds", p: Policy{Severities: []string{"Critical", "High"}}, want: []string{`rework_at: "Major" is not one of`, `fail_at: "Blocker" is not one of`}},
		{name: "fail_at below rework_at", p: Policy{ReworkAt: "Blocker", FailAt: "Minor"}, want: []string{"fail_at: Minor is less severe than rework_at Blocker"}},
		{name: "thresholds compare case-insensitively", p: Policy{ReworkAt: "major", FailAt: "BLOCKER"}},
		{name: "duplicate severity", p: Policy{Severities: []string{"Blocker", "Major", "major"}}, want: []string{`severities[2]: "major" repeats severities[1]`}},
		{name: "empty severity", p: Policy{Severities: []string{"Blocker", "", "Major"}}, want: []string{"severities[1]: an empty severity name"}},
		{name: "N/A as a severity", p: Policy{Severities: []string{"Blocker", "Major", "N/A"}}, want: []string{`severities[2]: "N/A" means no severity`}},
		{name: "spaces around a severity", p: Policy{Severities: []string{"Blocker", "Major "}}, want: []string{`severities[1]: "Major " has leading or trailing spaces`}},
		{name: "negative min_reviews", p: Policy{MinReviews: -1}, want: []string{"min_reviews: -1 is not valid"}},
		{name: "negative max_missing", p: Policy{MaxMissing: &neg}, want: []string{"max_missing: -1 is not valid"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probs := tt.p.Problems()
			var got []string
			for _, pr := range probs {
				got = append(got, pr.Field+": "+pr.Message)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Problems = %q, want %d like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], w) && !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want %q", i, got[i], w)
				}
			}
			err := tt.p.Validate()
			if (err != nil) != (len(tt.want) > 0) {
				t.Errorf("Validate = %v", err)
			}
		})
	}
}

func TestEnumsValid(t *testing.T) {
	tests := []struct {
		name  string
		valid bool
		want  bool
	}{
		{name: "proceed", valid: OutcomeProceed.Valid(), want: true},
		{name: "unknown outcome", valid: Outcome("pass").Valid(), want: false},
		{name: "every rule", valid: !slices.ContainsFunc(AllRules(), func(r Rule) bool { return !r.Valid() }), want: true},
		{name: "unknown rule", valid: Rule("quorum").Valid(), want: false},
		{name: "delivered", valid: StateDelivered.Valid(), want: true},
		{name: "unknown state", valid: State("lost").Valid(), want: false},
		{name: "memory basis", valid: BasisMemory.Valid(), want: true},
		{name: "unknown basis", valid: Basis("guess").Valid(), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.valid != tt.want {
				t.Fatalf("Valid() = %v, want %v", tt.valid, tt.want)
			}
		})
	}
}

func TestRoleString(t *testing.T) {
	tests := []struct {
		role Role
		want string
	}{
		{Role{}, "ordinary"},
		{Role{Blocking: true, Required: true}, "blocking, required"},
		{Role{Advisory: true}, "advisory"},
		{Role{Advisory: true, Required: true}, "required"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.role), func(t *testing.T) {
			if got := tt.role.String(); got != tt.want {
				t.Fatalf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

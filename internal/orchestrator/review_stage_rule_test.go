package orchestrator

import (
	"reflect"
	"testing"
	"time"
)

func TestFirstReviewers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		bidders, gate []string
		want          []string
	}{
		{"no gate: every bidder at once", []string{"v-build", "v-tests"}, nil, []string{"v-build", "v-tests"}},
		{"the gate reviewer first, the others held back", []string{"v-build", "v-feature", "v-tests"}, []string{"v-build"}, []string{"v-build"}},
		{"two gates together first", []string{"a", "b", "c"}, []string{"c", "a"}, []string{"a", "c"}},
		{"only gate reviewers bid: all at once", []string{"v-build"}, []string{"v-build"}, []string{"v-build"}},
		{"the gate did not bid: every bidder at once", []string{"v-tests", "v-tasks"}, []string{"v-build"}, []string{"v-tests", "v-tasks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := firstReviewers(tc.bidders, tc.gate); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("firstReviewers(%v, %v) = %v, want %v", tc.bidders, tc.gate, got, tc.want)
			}
		})
	}
}

func TestNextReviewStep(t *testing.T) {
	t.Parallel()
	set := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	all := []string{"v-build", "v-feature", "v-tasks", "v-tests"}
	for _, tc := range []struct {
		name string
		in   reviewStageInput
		want reviewStageDecision
	}{
		{name: "every bidder reviewed: the cluster decides",
			in:   reviewStageInput{Bidders: all, Granted: all},
			want: reviewStageDecision{Step: reviewDecide}},
		{name: "the gate passed: the others are granted",
			in:   reviewStageInput{Bidders: all, Granted: []string{"v-build"}},
			want: reviewStageDecision{Step: reviewGrantRest, Agents: []string{"v-feature", "v-tasks", "v-tests"}}},
		{name: "the gate failed: the others are skipped, never asked",
			in:   reviewStageInput{Bidders: all, Granted: []string{"v-build"}, Gated: true},
			want: reviewStageDecision{Step: reviewGateDecided, Agents: []string{"v-feature", "v-tasks", "v-tests"}}},
		{name: "a gate failing after every review is in: the cluster decides (gate rule)",
			in:   reviewStageInput{Bidders: all, Granted: all, Gated: true},
			want: reviewStageDecision{Step: reviewDecide}},
		{name: "an answered ERROR is asked once more",
			in:   reviewStageInput{Bidders: all, Granted: all, Errored: set("v-tests", "v-tasks")},
			want: reviewStageDecision{Step: reviewAskAgain, Agents: []string{"v-tasks", "v-tests"}}},
		{name: "an ERROR asked again already counts as failed: the cluster decides",
			in:   reviewStageInput{Bidders: all, Granted: all, Errored: set("v-tests"), Retried: set("v-tests")},
			want: reviewStageDecision{Step: reviewDecide}},
		{name: "only the ERROR not yet asked again is",
			in:   reviewStageInput{Bidders: all, Granted: all, Errored: set("v-tests", "v-tasks"), Retried: set("v-tests")},
			want: reviewStageDecision{Step: reviewAskAgain, Agents: []string{"v-tasks"}}},
		{name: "a gate's ERROR is asked again before it decides",
			in:   reviewStageInput{Bidders: all, Granted: []string{"v-build"}, Errored: set("v-build"), Gated: true},
			want: reviewStageDecision{Step: reviewAskAgain, Agents: []string{"v-build"}}},
		{name: "a gate's second ERROR decides: the others are skipped",
			in:   reviewStageInput{Bidders: all, Granted: []string{"v-build"}, Errored: set("v-build"), Retried: set("v-build"), Gated: true},
			want: reviewStageDecision{Step: reviewGateDecided, Agents: []string{"v-feature", "v-tasks", "v-tests"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nextReviewStep(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("nextReviewStep = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestOverdueAdvisory(t *testing.T) {
	t.Parallel()
	const granted, now = 1_000, 61_000 // a minute after the grant
	dl := map[string]time.Duration{"r-knowledge": 30 * time.Second, "r-docs": 90 * time.Second}
	for _, tc := range []struct {
		name      string
		missing   []string
		delivered map[string]int64
		want      advisoryWait
	}{
		{name: "a non-advisory review is awaited: nothing skipped, no deadline",
			missing: []string{"r-quality"}, want: advisoryWait{}},
		{name: "an advisory reviewer past its deadline is skipped",
			missing: []string{"r-knowledge"}, delivered: map[string]int64{"r-knowledge": 2_000},
			want: advisoryWait{Skip: []string{"r-knowledge"}}},
		{name: "an advisory reviewer within its deadline is waited for until it",
			missing: []string{"r-docs"}, delivered: map[string]int64{"r-docs": 11_000},
			want: advisoryWait{Next: 40 * time.Second}},
		{name: "one advisory past, another within: wait for the other (skip together)",
			missing: []string{"r-docs", "r-knowledge"}, delivered: map[string]int64{"r-docs": 11_000, "r-knowledge": 2_000},
			want: advisoryWait{Next: 40 * time.Second}},
		{name: "a grant still queued counts from the phase's grant",
			missing: []string{"r-knowledge"}, want: advisoryWait{Skip: []string{"r-knowledge"}}},
		{name: "an advisory beside an awaited ordinary reviewer is not skipped yet",
			missing: []string{"r-knowledge", "r-quality"}, delivered: map[string]int64{"r-knowledge": 2_000},
			want: advisoryWait{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := overdueAdvisory(tc.missing, dl, tc.delivered, granted, now); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("overdueAdvisory = %+v, want %+v", got, tc.want)
			}
		})
	}
}

package orchestrator

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

func TestDecideConsensus(t *testing.T) {
	t.Parallel()
	const (
		rev = blackboard.BidReview
		clm = blackboard.BidClaim
		exc = blackboard.BidExclusive
		ign = blackboard.BidIgnore
	)
	live := func(names ...string) func(string) bool {
		return func(a string) bool { return contains(names, a) }
	}
	base := func() consensusInput {
		return consensusInput{Live: live("coder", "coder-b", "r-sec", "r-style", "writer"),
			Required: map[string]bool{}, Reviewers: map[string]bool{}, MinReviews: 1,
			NowMs: 10_000, DeadlineMs: 5_000, BidTimeout: 2 * time.Second, NoBidTimeout: time.Minute}
	}
	for _, tc := range []struct {
		name string
		edit func(*consensusInput)
		want consensusDecision
	}{
		{name: "before the deadline an asked agent is waited for",
			edit: func(in *consensusInput) {
				in.Expected, in.Bids, in.DeadlineMs = []string{"coder", "writer"}, map[string]blackboard.Bid{"coder": exc}, 20_000
			},
			want: consensusDecision{Step: stepWait}},
		{name: "every bid in: exclusive to the lowest name",
			edit: func(in *consensusInput) {
				in.Expected = []string{"coder-b", "coder"}
				in.Bids, in.DeadlineMs = map[string]blackboard.Bid{"coder": exc, "coder-b": exc}, 20_000
			},
			want: consensusDecision{Step: stepGrant, Phase: phaseExclusive, Agents: []string{"coder"}}},
		{name: "review before parallel before exclusive",
			edit: func(in *consensusInput) {
				in.Expected = []string{"coder", "r-sec", "writer"}
				in.Bids = map[string]blackboard.Bid{"coder": exc, "r-sec": rev, "writer": clm}
			},
			want: consensusDecision{Step: stepGrant, Phase: phaseReview, Agents: []string{"r-sec"}}},
		{name: "parallel grants every claim bidder",
			edit: func(in *consensusInput) {
				in.Expected = []string{"coder", "writer", "coder-b"}
				in.Bids = map[string]blackboard.Bid{"coder": clm, "writer": clm, "coder-b": exc}
			},
			want: consensusDecision{Step: stepGrant, Phase: phaseParallel, Agents: []string{"coder", "writer"}}},
		{name: "past the deadline a silent agent counts as ignore when someone bid",
			edit: func(in *consensusInput) {
				in.Expected, in.Bids = []string{"coder", "writer"}, map[string]blackboard.Bid{"coder": exc}
			},
			want: consensusDecision{Step: stepGrant, Phase: phaseExclusive, Agents: []string{"coder"}, Silent: []string{"writer"}}},
		{name: "no consumer configured: a dead end by configuration",
			edit: func(in *consensusInput) {},
			want: consensusDecision{Step: stepEnd}},
		{name: "every consumer answered ignore: declined",
			edit: func(in *consensusInput) {
				in.Expected, in.Bids = []string{"coder", "writer"}, map[string]blackboard.Bid{"coder": ign, "writer": ign}
			},
			want: consensusDecision{Step: stepEnd, Declined: true}},
		{name: "past the deadline nobody bid while an asked consumer is silent: ask again (Redis away, cub frozen)",
			edit: func(in *consensusInput) {
				in.Expected, in.Bids = []string{"coder"}, map[string]blackboard.Bid{}
			},
			want: consensusDecision{Step: stepAskAgain, Ask: []string{"coder"}, NewExpected: []string{"coder"},
				Missing: []string{"coder"}, Delay: 2 * time.Second}},
		{name: "a silent consumer beside an ignore is still needed when nobody bid",
			edit: func(in *consensusInput) {
				in.Expected, in.Bids = []string{"coder", "writer"}, map[string]blackboard.Bid{"writer": ign}
			},
			want: consensusDecision{Step: stepAskAgain, Ask: []string{"coder"}, NewExpected: []string{"coder", "writer"},
				Missing: []string{"coder"}, Delay: 2 * time.Second}},
		{name: "every consumer down at creation: wait for them, asking nobody yet",
			edit: func(in *consensusInput) {
				in.Absent, in.Live = []string{"coder"}, live()
			},
			want: consensusDecision{Step: stepAskAgain, NewExpected: nil, Missing: []string{"coder"}, Delay: 2 * time.Second}},
		{name: "an absent consumer alive again joins the expected bidders",
			edit: func(in *consensusInput) {
				in.Absent, in.Rounds, in.NoAnswerSinceMs = []string{"coder"}, 1, 8_000
			},
			want: consensusDecision{Step: stepAskAgain, Ask: []string{"coder"}, NewExpected: []string{"coder"},
				Missing: []string{"coder"}, Delay: 4 * time.Second}},
		{name: "the delay doubles per round up to 30s",
			edit: func(in *consensusInput) {
				in.Expected, in.Rounds, in.NoAnswerSinceMs, in.NoBidTimeout = []string{"coder"}, 6, 9_000, time.Hour
			},
			want: consensusDecision{Step: stepAskAgain, Ask: []string{"coder"}, NewExpected: []string{"coder"},
				Missing: []string{"coder"}, Delay: 30 * time.Second}},
		{name: "the last round ends at no_bid_timeout",
			edit: func(in *consensusInput) {
				in.Expected, in.Rounds, in.NoAnswerSinceMs = []string{"coder"}, 5, 10_000-59_000
			},
			want: consensusDecision{Step: stepAskAgain, Ask: []string{"coder"}, NewExpected: []string{"coder"},
				Missing: []string{"coder"}, Delay: time.Second}},
		{name: "no answer within no_bid_timeout: fail naming the agents",
			edit: func(in *consensusInput) {
				in.Expected, in.Absent, in.NoAnswerSinceMs = []string{"coder"}, []string{"writer"}, 10_000-60_000
			},
			want: consensusDecision{Step: stepNoAnswer, Missing: []string{"coder", "writer"}}},
		{name: "a silent required reviewer is waited for although others bid",
			edit: func(in *consensusInput) {
				in.Expected = []string{"coder", "r-sec", "r-style"}
				in.Bids = map[string]blackboard.Bid{"coder": exc, "r-style": rev}
				in.Required["r-sec"], in.Reviewers["r-sec"], in.Reviewers["r-style"] = true, true, true
			},
			want: consensusDecision{Step: stepAskAgain, Ask: []string{"r-sec"}, NewExpected: []string{"coder", "r-sec", "r-style"},
				Missing: []string{"r-sec"}, Delay: 2 * time.Second}},
		{name: "a required reviewer down at creation is waited for",
			edit: func(in *consensusInput) {
				in.Expected, in.Absent = []string{"coder", "r-style"}, []string{"r-sec"}
				in.Bids = map[string]blackboard.Bid{"coder": exc, "r-style": rev}
				in.Required["r-sec"], in.Live = true, live("coder", "r-style")
				in.DeadlineMs = 20_000
			},
			want: consensusDecision{Step: stepAskAgain, NewExpected: []string{"coder", "r-style"},
				Missing: []string{"r-sec"}, Delay: 2 * time.Second}},
		{name: "a required reviewer that never answers fails the claim",
			edit: func(in *consensusInput) {
				in.Expected, in.Absent = []string{"coder"}, []string{"r-sec"}
				in.Bids = map[string]blackboard.Bid{"coder": exc}
				in.Required["r-sec"], in.NoAnswerSinceMs = true, 10_000-61_000
			},
			want: consensusDecision{Step: stepNoAnswer, Missing: []string{"r-sec"}}},
		{name: "a required reviewer that answered ignore is not waited for",
			edit: func(in *consensusInput) {
				in.Expected, in.Bids = []string{"coder", "r-sec"}, map[string]blackboard.Bid{"coder": exc, "r-sec": ign}
				in.Required["r-sec"] = true
			},
			want: consensusDecision{Step: stepGrant, Phase: phaseExclusive, Agents: []string{"coder"}}},
		{name: "every reviewer down: too few reviews is never an approval",
			edit: func(in *consensusInput) {
				in.Expected, in.Absent = []string{"coder"}, []string{"r-sec", "r-style"}
				in.Bids, in.Live = map[string]blackboard.Bid{"coder": exc}, live("coder")
				in.Reviewers["r-sec"], in.Reviewers["r-style"], in.MinReviews = true, true, 2
			},
			want: consensusDecision{Step: stepAskAgain, NewExpected: []string{"coder"},
				Missing: []string{"r-sec", "r-style"}, Delay: 2 * time.Second}},
		{name: "min_reviews met: a silent extra reviewer counts as ignore",
			edit: func(in *consensusInput) {
				in.Expected = []string{"r-sec", "r-style", "writer"}
				in.Bids = map[string]blackboard.Bid{"r-sec": rev, "r-style": rev}
				in.Reviewers["r-sec"], in.Reviewers["r-style"], in.Reviewers["writer"], in.MinReviews = true, true, true, 2
			},
			want: consensusDecision{Step: stepGrant, Phase: phaseReview, Agents: []string{"r-sec", "r-style"}, Silent: []string{"writer"}}},
		{name: "a silent consumer whose kind of work nobody else bid is needed (the coder while reviewers reviewed)",
			edit: func(in *consensusInput) {
				in.Expected, in.Bids = []string{"coder", "r-style"}, map[string]blackboard.Bid{"r-style": rev}
				in.Predicted = map[string]blackboard.Bid{"coder": exc, "r-style": rev}
			},
			want: consensusDecision{Step: stepAskAgain, Ask: []string{"coder"}, NewExpected: []string{"coder", "r-style"},
				Missing: []string{"coder"}, Delay: 2 * time.Second}},
		{name: "a silent consumer whose kind of work another agent bid counts as ignore",
			edit: func(in *consensusInput) {
				in.Expected, in.Bids = []string{"coder", "coder-b"}, map[string]blackboard.Bid{"coder-b": exc}
				in.Predicted = map[string]blackboard.Bid{"coder": exc, "coder-b": exc}
			},
			want: consensusDecision{Step: stepGrant, Phase: phaseExclusive, Agents: []string{"coder-b"}, Silent: []string{"coder"}}},
		{name: "an advisory (non-counting) silent agent is not waited for when someone bid",
			edit: func(in *consensusInput) {
				in.Expected, in.Bids, in.MinReviews = []string{"coder", "r-style"}, map[string]blackboard.Bid{"coder": exc}, 2
			},
			want: consensusDecision{Step: stepGrant, Phase: phaseExclusive, Agents: []string{"coder"}, Silent: []string{"r-style"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.edit(&in)
			if in.Bids == nil {
				in.Bids = map[string]blackboard.Bid{}
			}
			got := decideConsensus(in)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decideConsensus =\n  %+v\nwant\n  %+v", got, tc.want)
			}
		})
	}
}

func TestNextPhase(t *testing.T) {
	t.Parallel()
	bids := map[string]blackboard.Bid{"b": blackboard.BidExclusive, "a": blackboard.BidExclusive, "r": blackboard.BidReview, "x": blackboard.BidIgnore}
	for _, tc := range []struct {
		from   phase
		want   phase
		agents []string
		ok     bool
	}{
		{phaseReview, phaseReview, []string{"r"}, true},
		{phaseParallel, phaseExclusive, []string{"a"}, true},
		{phaseExclusive, phaseExclusive, []string{"a"}, true},
	} {
		p, agents, ok := nextPhase(tc.from, bids)
		if p != tc.want || !reflect.DeepEqual(agents, tc.agents) || ok != tc.ok {
			t.Errorf("nextPhase(%d) = %d %v %v, want %d %v %v", tc.from, p, agents, ok, tc.want, tc.agents, tc.ok)
		}
	}
	if _, _, ok := nextPhase(phaseReview, map[string]blackboard.Bid{"x": blackboard.BidIgnore}); ok {
		t.Error("nextPhase found a phase among ignores only")
	}
}

func TestChainEndAndNoAnswerWording(t *testing.T) {
	t.Parallel()
	if got := chainEndNote("Plan", false, nil); got != "Plan: no agent consumes this type" {
		t.Errorf("chainEndNote = %q", got)
	}
	if got := chainEndNote("Plan", true, []string{"a", "b"}); got != "Plan: every consumer declined it (a, b)" {
		t.Errorf("chainEndNote declined = %q", got)
	}
	got := noAnswerReason("Plan", []string{"r-sec", "coder"}, 40*time.Second, func(a string) bool { return a == "coder" })
	for _, want := range []string{"r-sec (not running)", "coder (alive, but never answered)", "on the Plan after 40s"} {
		if !strings.Contains(got, want) {
			t.Errorf("noAnswerReason = %q, missing %q", got, want)
		}
	}
}

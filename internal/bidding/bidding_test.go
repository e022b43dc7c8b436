package bidding

import (
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

func TestStatic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		rules     Rules
		typ, prod string
		bid       blackboard.Bid
		reason    string
		decided   bool
	}{
		{"strategy", Rules{Role: "me", Strategy: "exclusive"}, "Plan", "user", "exclusive", ReasonStrategy, true},
		{"own output", Rules{Role: "me", Strategy: "exclusive"}, "Plan", "me", "ignore", ReasonOwnOutput, true},
		{"own output opted in", Rules{Role: "me", Strategy: "claim", BidOnOwnOutputs: true}, "Plan", "me", "claim", ReasonStrategy, true},
		{"not consumed", Rules{Role: "me", Strategy: "review", Consumes: []string{"Code*"}}, "Plan", "user", "ignore", ReasonNotConsumed, true},
		{"consumed by glob", Rules{Role: "me", Strategy: "review", Consumes: []string{"Code*"}}, "CodeCommit", "user", "review", ReasonStrategy, true},
		{"script decides before consumes", Rules{Role: "me", Strategy: "review", Consumes: []string{"X"}, HasScript: true}, "Plan", "user", "", "", false},
		{"own output even with a script", Rules{Role: "me", Strategy: "review", HasScript: true}, "Plan", "me", "ignore", ReasonOwnOutput, true},
		{"strategy ignore", Rules{Role: "me", Strategy: "ignore"}, "Plan", "user", "ignore", ReasonStrategy, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bid, reason, decided := tc.rules.Static(tc.typ, tc.prod)
			if bid != tc.bid || reason != tc.reason || decided != tc.decided {
				t.Fatalf("Static = %q %q %v, want %q %q %v", bid, reason, decided, tc.bid, tc.reason, tc.decided)
			}
		})
	}
}

func TestConsumes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		patterns []string
		typ      string
		want     bool
	}{
		{[]string{"Plan"}, "Plan", true},
		{[]string{"Plan"}, "PlanB", false},
		{[]string{"Code*"}, "CodeCommit", true},
		{[]string{"Goal*", "Plan"}, "Plan", true},
		{[]string{"[A-C]*"}, "Design", false},
		{nil, "Plan", false},
	} {
		if got := Consumes(tc.patterns, tc.typ); got != tc.want {
			t.Errorf("Consumes(%v, %q) = %v, want %v", tc.patterns, tc.typ, got, tc.want)
		}
	}
}

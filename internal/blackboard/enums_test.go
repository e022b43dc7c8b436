package blackboard_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

// readable is what a stored enum value may look like: no spaces, quotes or
// colons, so it reads (and greps) cleanly in redis-cli.
var readable = regexp.MustCompile(`^[A-Za-z_]+$`)

// checkEnum checks an All* list against the expected values (in order),
// that every listed value is Valid and readable, that unknown values are
// not, and that All* hands out a fresh slice.
func checkEnum[T ~string](t *testing.T, all func() []T, valid func(T) bool, want []T, invalid ...T) {
	t.Helper()
	got := all()
	if !slices.Equal(got, want) {
		t.Errorf("All = %v, want %v", got, want)
	}
	seen := map[T]bool{}
	for _, v := range got {
		if seen[v] {
			t.Errorf("%q listed twice", v)
		}
		seen[v] = true
		if !valid(v) {
			t.Errorf("%q is listed but not Valid", v)
		}
		if !readable.MatchString(string(v)) {
			t.Errorf("%q is not readable in redis-cli", v)
		}
	}
	for _, v := range append(invalid, "", "bogus") {
		if valid(v) {
			t.Errorf("%q is Valid, want not", v)
		}
	}
	got[0] = "mutated"
	if all()[0] == "mutated" {
		t.Error("All returns a shared slice that callers can corrupt")
	}
}

func TestEnums(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"StructuralType", func(t *testing.T) {
			checkEnum(t, blackboard.AllStructuralTypes, blackboard.StructuralType.Valid,
				[]blackboard.StructuralType{"Standard", "Review", "Question", "Answer", "Failure", "Terminal"},
				"standard", "REVIEW")
		}},
		{"ClaimStatus", func(t *testing.T) {
			checkEnum(t, blackboard.AllClaimStatuses, blackboard.ClaimStatus.Valid,
				[]blackboard.ClaimStatus{"pending_consensus", "pending_approval", "pending_review", "pending_parallel",
					"pending_exclusive", "pending_assignment", "complete", "terminated"},
				"Complete", "pending")
		}},
		{"Bid", func(t *testing.T) {
			checkEnum(t, blackboard.AllBids, blackboard.Bid.Valid,
				[]blackboard.Bid{"review", "claim", "exclusive", "ignore"}, "Claim", "feedback")
		}},
		{"GrantKind", func(t *testing.T) {
			checkEnum(t, blackboard.AllGrantKinds, blackboard.GrantKind.Valid,
				[]blackboard.GrantKind{"review", "claim", "exclusive", "feedback", "learn"}, "ignore")
		}},
		{"WorkflowStatus", func(t *testing.T) {
			checkEnum(t, blackboard.AllWorkflowStatuses, blackboard.WorkflowStatus.Valid,
				[]blackboard.WorkflowStatus{"running", "completed", "failed", "rejected", "cancelled"}, "canceled", "Running")
		}},
		{"ApprovalDecision", func(t *testing.T) {
			checkEnum(t, blackboard.AllApprovalDecisions, blackboard.ApprovalDecision.Valid,
				[]blackboard.ApprovalDecision{"approved", "rejected"}, "approve", "Approved")
		}},
		{"DecisionChannel", func(t *testing.T) {
			checkEnum(t, blackboard.AllDecisionChannels, blackboard.DecisionChannel.Valid,
				[]blackboard.DecisionChannel{"cli", "vault_move", "frontmatter", "console", "api"}, "vault")
		}},
		{"ClaimKind", func(t *testing.T) {
			// The regular kind is the empty string (claims stored before
			// kinds existed read as regular), so checkEnum does not fit.
			want := []blackboard.ClaimKind{"", "feedback", "learn"}
			if got := blackboard.AllClaimKinds(); !slices.Equal(got, want) {
				t.Errorf("All = %v, want %v", got, want)
			}
			for _, k := range want {
				if !k.Valid() {
					t.Errorf("%q is not Valid", k)
				}
			}
			for _, k := range []blackboard.ClaimKind{"regular", "Learn", "review"} {
				if k.Valid() {
					t.Errorf("%q is Valid, want not", k)
				}
			}
		}},
		{"MessageKind", func(t *testing.T) {
			checkEnum(t, blackboard.AllMessageKinds, blackboard.MessageKind.Valid,
				[]blackboard.MessageKind{"bid_request", "grant"}, "bid")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

func TestStructuralTypeClaimable(t *testing.T) {
	t.Parallel()
	want := map[blackboard.StructuralType]bool{
		blackboard.StructuralStandard: true, blackboard.StructuralQuestion: true, blackboard.StructuralAnswer: true,
		blackboard.StructuralReview: false, blackboard.StructuralFailure: false, blackboard.StructuralTerminal: false,
	}
	for _, s := range blackboard.AllStructuralTypes() {
		if got, ok := want[s]; !ok || s.Claimable() != got {
			t.Errorf("%s.Claimable() = %v, want %v (listed %v)", s, s.Claimable(), got, ok)
		}
	}
}

func TestClaimStatusFinalAndGrantKind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  blackboard.ClaimStatus
		final bool
		grant blackboard.GrantKind
	}{
		{blackboard.ClaimPendingConsensus, false, ""},
		{blackboard.ClaimPendingApproval, false, ""},
		{blackboard.ClaimPendingReview, false, blackboard.GrantReview},
		{blackboard.ClaimPendingParallel, false, blackboard.GrantClaim},
		{blackboard.ClaimPendingExclusive, false, blackboard.GrantExclusive},
		{blackboard.ClaimPendingAssignment, false, blackboard.GrantFeedback},
		{blackboard.ClaimComplete, true, ""},
		{blackboard.ClaimTerminated, true, ""},
	}
	if len(cases) != len(blackboard.AllClaimStatuses()) {
		t.Fatalf("table covers %d statuses, AllClaimStatuses has %d", len(cases), len(blackboard.AllClaimStatuses()))
	}
	for _, tc := range cases {
		t.Run(string(tc.name), func(t *testing.T) {
			t.Parallel()
			if got := tc.name.Final(); got != tc.final {
				t.Errorf("Final() = %v, want %v", got, tc.final)
			}
			if got := tc.name.GrantKind(); got != tc.grant {
				t.Errorf("GrantKind() = %q, want %q", got, tc.grant)
			}
			if g := tc.name.GrantKind(); g != "" && !g.Valid() {
				t.Errorf("GrantKind() = %q is not Valid", g)
			}
		})
	}
}

func TestWorkflowStatusFinal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  blackboard.WorkflowStatus
		final bool
	}{
		{blackboard.WorkflowRunning, false},
		{blackboard.WorkflowCompleted, true},
		{blackboard.WorkflowFailed, true},
		{blackboard.WorkflowCancelled, true},
		{"", false}, // the zero value has not ended
	}
	for _, tc := range cases {
		if got := tc.name.Final(); got != tc.final {
			t.Errorf("%q.Final() = %v, want %v", tc.name, got, tc.final)
		}
	}
}

func TestClaimGrantedAgents(t *testing.T) {
	t.Parallel()
	base := blackboard.Claim{
		GrantedReviewAgents: []string{"r1", "r2"}, GrantedParallelAgents: []string{"p1"}, GrantedExclusiveAgent: "x",
	}
	cases := []struct {
		name   blackboard.ClaimStatus
		noExcl bool
		want   []string
	}{
		{name: blackboard.ClaimPendingConsensus},
		{name: blackboard.ClaimPendingReview, want: []string{"r1", "r2"}},
		{name: blackboard.ClaimPendingParallel, want: []string{"p1"}},
		{name: blackboard.ClaimPendingExclusive, want: []string{"x"}},
		{name: blackboard.ClaimPendingAssignment, want: []string{"x"}},
		{name: blackboard.ClaimPendingExclusive, noExcl: true},
		{name: blackboard.ClaimComplete},
	}
	for _, tc := range cases {
		c := base
		c.Status = tc.name
		if tc.noExcl {
			c.GrantedExclusiveAgent = ""
		}
		if got := c.GrantedAgents(); !slices.Equal(got, tc.want) {
			t.Errorf("%s (no exclusive %v): GrantedAgents() = %v, want %v", tc.name, tc.noExcl, got, tc.want)
		}
	}
}

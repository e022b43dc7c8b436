package blackboard_test

import (
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

func TestRejectionNeedsReason(t *testing.T) {
	cases := []struct {
		name     string
		decision blackboard.ApprovalDecision
		reason   string
		learner  bool
		want     bool
	}{
		{"rejected without a reason and no learner", blackboard.ApprovalRejected, "", false, true},
		{"rejected with only spaces and no learner", blackboard.ApprovalRejected, " \n\t", false, true},
		{"rejected without a reason, a learner works it out", blackboard.ApprovalRejected, "", true, false},
		{"rejected with a reason and no learner", blackboard.ApprovalRejected, "too vague", false, false},
		{"rejected with a reason and a learner", blackboard.ApprovalRejected, "too vague", true, false},
		{"approved without a reason", blackboard.ApprovalApproved, "", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := blackboard.RejectionNeedsReason(tc.decision, tc.reason, tc.learner); got != tc.want {
				t.Errorf("RejectionNeedsReason(%q, %q, %v) = %v, want %v", tc.decision, tc.reason, tc.learner, got, tc.want)
			}
		})
	}
}

package vault

import (
	"maps"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

func TestApprovalFiles(t *testing.T) {
	req := func(id string) blackboard.ApprovalRequest { return blackboard.ApprovalRequest{ArtefactID: id} }
	for _, c := range []struct {
		name    string
		names   map[string][]string
		pending []blackboard.ApprovalRequest
		want    map[string]string
	}{
		{"one pending file found by its short id",
			map[string][]string{PendingApproval: {"plan-make-it-0123abcd.md", "other-99999999.md"}},
			[]blackboard.ApprovalRequest{req("0123abcdeeeeffff")},
			map[string]string{"0123abcdeeeeffff": PendingApproval + "/plan-make-it-0123abcd.md"}},
		{"no file yet: not in the map",
			map[string][]string{PendingApproval: {"other-99999999.md"}},
			[]blackboard.ApprovalRequest{req("0123abcdeeeeffff")},
			map[string]string{}},
		{"the short id must end the name",
			map[string][]string{PendingApproval: {"0123abcd-plan.md"}},
			[]blackboard.ApprovalRequest{req("0123abcdeeeeffff")},
			map[string]string{}},
		{"moved to Approved/ but not applied yet: the later folder wins",
			map[string][]string{PendingApproval: {"plan-0123abcd.md"}, Approved: {"plan-0123abcd.md"}},
			[]blackboard.ApprovalRequest{req("0123abcdeeeeffff")},
			map[string]string{"0123abcdeeeeffff": Approved + "/plan-0123abcd.md"}},
		{"two approvals sharing a short id both point at the file",
			map[string][]string{PendingApproval: {"plan-0123abcd.md"}},
			[]blackboard.ApprovalRequest{req("0123abcd11111111"), req("0123abcd22222222")},
			map[string]string{"0123abcd11111111": PendingApproval + "/plan-0123abcd.md", "0123abcd22222222": PendingApproval + "/plan-0123abcd.md"}},
		{"an id shorter than a short id is matched whole",
			map[string][]string{NeedsHumanReview: {"x-abc.md", "ab.md"}},
			[]blackboard.ApprovalRequest{req("abc")},
			map[string]string{"abc": NeedsHumanReview + "/x-abc.md"}},
		{"a folder Sett does not decide from is not read",
			map[string][]string{"Elsewhere": {"plan-0123abcd.md"}},
			[]blackboard.ApprovalRequest{req("0123abcdeeeeffff")},
			map[string]string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := approvalFiles(c.names, c.pending); !maps.Equal(got, c.want) {
				t.Fatalf("approvalFiles = %v, want %v", got, c.want)
			}
		})
	}
}

package blackboard

import "testing"

// TestDecisionRule: which human decisions apply to a claim. A late
// decision is accepted: on a claim still waiting (the orchestrator has
// not expired it yet), and on one its timeout ended for human review,
// which it reopens with its workflow; a decision is never changed, and
// nothing is resumed for a workflow that ended otherwise.
func TestDecisionRule(t *testing.T) {
	const exp = int64(10_000)
	cases := []struct {
		name string
		s    decisionState
		want decisionVerdict
	}{
		{"waiting, in time", decisionState{ClaimStatus: ClaimPendingApproval, ExpiresAtMs: exp, EndedAtMs: 5_000, Workflow: WorkflowRunning}, verdictDecide},
		{"waiting, no timeout", decisionState{ClaimStatus: ClaimPendingApproval, Workflow: WorkflowRunning}, verdictDecide},
		{"waiting past the timeout, not yet expired", decisionState{ClaimStatus: ClaimPendingApproval, ExpiresAtMs: exp, EndedAtMs: 5_000, Workflow: WorkflowRunning}, verdictDecide},
		{"expired, workflow failed by it", decisionState{ClaimStatus: ClaimTerminated, TerminatedFrom: ClaimPendingApproval, ExpiresAtMs: exp, EndedAtMs: exp + 3, Workflow: WorkflowFailed}, verdictReopen},
		{"expired, workflow still running", decisionState{ClaimStatus: ClaimTerminated, TerminatedFrom: ClaimPendingApproval, ExpiresAtMs: exp, EndedAtMs: exp, Workflow: WorkflowRunning}, verdictReopen},
		{"expired, workflow cancelled since", decisionState{ClaimStatus: ClaimTerminated, TerminatedFrom: ClaimPendingApproval, ExpiresAtMs: exp, EndedAtMs: exp + 3, Workflow: WorkflowCancelled}, verdictEnded},
		{"expired, workflow completed otherwise", decisionState{ClaimStatus: ClaimTerminated, TerminatedFrom: ClaimPendingApproval, ExpiresAtMs: exp, EndedAtMs: exp + 3, Workflow: WorkflowCompleted}, verdictEnded},
		{"expired, workflow gone", decisionState{ClaimStatus: ClaimTerminated, TerminatedFrom: ClaimPendingApproval, ExpiresAtMs: exp, EndedAtMs: exp + 3}, verdictEnded},
		{"ended while waiting, before its timeout (workflow cancelled)", decisionState{ClaimStatus: ClaimTerminated, TerminatedFrom: ClaimPendingApproval, ExpiresAtMs: exp, EndedAtMs: exp - 1, Workflow: WorkflowFailed}, verdictStale},
		{"ended while waiting, no timeout", decisionState{ClaimStatus: ClaimTerminated, TerminatedFrom: ClaimPendingApproval, EndedAtMs: exp, Workflow: WorkflowFailed}, verdictStale},
		{"approved already", decisionState{ClaimStatus: ClaimPendingApproval, Decided: true, Workflow: WorkflowRunning}, verdictAlready},
		{"decided, then moved on", decisionState{ClaimStatus: ClaimPendingConsensus, Decided: true, Workflow: WorkflowRunning}, verdictAlready},
		{"never gated, in consensus", decisionState{ClaimStatus: ClaimPendingConsensus, Workflow: WorkflowRunning}, verdictStale},
		{"failed in work, not in approval", decisionState{ClaimStatus: ClaimTerminated, TerminatedFrom: ClaimStatus("exclusive_claimed"), ExpiresAtMs: exp, EndedAtMs: exp + 1, Workflow: WorkflowFailed}, verdictStale},
		{"complete", decisionState{ClaimStatus: ClaimComplete, Workflow: WorkflowCompleted}, verdictStale},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := decisionRule(c.s); got != c.want {
				t.Errorf("decisionRule(%+v) = %s, want %s", c.s, got, c.want)
			}
		})
	}
}

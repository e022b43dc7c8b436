package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

// TestRejectWithoutAReasonNeedsALearner: `sett reject ID` without
// --reason is refused with what to do, unless sett.yml names a learner,
// which works the learning out; then the decision goes to the blackboard
// (here refused there, for the goal does not wait for approval).
func TestRejectWithoutAReasonNeedsALearner(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	goal := blackboard.NewGoal("reject me", 0, "user", nil)
	if err := e.bb.CreateArtefact(t.Context(), goal, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.run(t, "reject", goal.ID)
	if err == nil || !strings.Contains(err.Error(), "needs --reason") || !strings.Contains(err.Error(), "orchestrator.learner") {
		t.Fatalf("reject without a reason or a learner: %v; want a usage error naming --reason and orchestrator.learner", err)
	}
	cfg := "version: \"1.0\"\norchestrator: {learner: learner}\nagents:\n  learner:\n    command: [\"true\"]\n    bidding_strategy: ignore\n"
	if err := os.WriteFile(filepath.Join(e.app.Dir, "sett.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = e.run(t, "reject", goal.ID)
	if err == nil || strings.Contains(err.Error(), "needs --reason") || !strings.Contains(err.Error(), "not waiting for approval") {
		t.Fatalf("reject without a reason, with a learner: %v; want it past the reason check, refused by the blackboard", err)
	}
}

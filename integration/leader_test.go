package integration

import (
	"testing"

	"github.com/settdev/sett/internal/stacktest"
	"github.com/settdev/sett/pkg/blackboard"
)

func TestSecondOrchestratorStaysPassive(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, `version: "1.0"
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
`)
	cub := s.StartCub("planner")
	s.WaitReady(cub)
	first := s.StartOrchestratorWith()
	s.WaitReady(first)
	s.WaitEvent(blackboard.EventLeaderElected, nil, wait)
	second := s.StartOrchestratorWith()
	s.WaitReady(second)

	wf := s.PostGoal("only one orchestrator acts")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	if n := len(s.Events(blackboard.EventLeaderElected)); n != 1 {
		t.Fatalf("%d leader elections with two orchestrators running, want 1", n)
	}
	assertNoDuplicates(t, s, wf, map[string]int{"GoalDefined": 1, "Plan": 1})

	// When the leader dies, the standby takes over with a new epoch once
	// the lease expires, and the work goes on.
	first.Kill()
	took := s.WaitEvent(blackboard.EventLeaderElected, func(e blackboard.Event) bool { return e.Field("epoch") == "2" }, wait)
	if took.Field("orchestrator") != "orchestrator-2" {
		t.Fatalf("epoch 2 taken by %q, want orchestrator-2", took.Field("orchestrator"))
	}
	wf2 := s.PostGoal("the standby acts now")
	if w := s.WaitWorkflow(wf2, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("second workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	assertNoDuplicates(t, s, wf2, map[string]int{"GoalDefined": 1, "Plan": 1})
}

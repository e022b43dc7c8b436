package integration

import (
	"os"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
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

// A restarted orchestrator takes its own lease over at once with a new
// epoch; a standby still waits for a live lease. The leader's TTL is an
// hour, so a takeover within the test's deadline cannot be an expiry.
func TestRestartedOrchestratorTakesOverAtOnceAndAStandbyWaits(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, `version: "1.0"
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
`)
	cub := s.StartCub("planner")
	s.WaitReady(cub)
	leader := s.StartOrchestratorArgs("--leader-ttl", "1h")
	s.WaitReady(leader)
	first := s.WaitEvent(blackboard.EventLeaderElected, func(e blackboard.Event) bool { return e.Field("epoch") == "1" }, wait)
	// The standby retries every second (its own TTL is 3s).
	standby := s.StartOrchestratorArgs("--leader-ttl", "3s")
	s.WaitReady(standby)

	leader.Kill()
	leader.Restart()
	took := s.WaitEvent(blackboard.EventLeaderElected, func(e blackboard.Event) bool { return e.Field("epoch") == "2" }, wait)
	if took.Field("orchestrator") != "orchestrator" || took.Field("reclaimed") != "true" || took.Field("holder") == first.Field("holder") {
		t.Fatalf("epoch 2 = %v, want a reclaim by a new boot of orchestrator (first boot %s)", took.Fields, first.Field("holder"))
	}
	wf := s.PostGoal("work goes on after the restart")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	assertNoDuplicates(t, s, wf, map[string]int{"GoalDefined": 1, "Plan": 1})

	// Without a restart, the standby sees the dead leader's lease held
	// and stands by: watch it try twice after the kill, then check no one
	// was elected.
	leader.Kill()
	holder := took.Field("holder")
	tries := func() int {
		b, _ := os.ReadFile(standby.LogPath)
		return strings.Count(string(b), `"holder":"`+holder+`"`)
	}
	before := tries()
	s.Eventually(wait, "the standby trying twice after the leader died", func() bool { return tries() >= before+2 })
	if n := len(s.Events(blackboard.EventLeaderElected)); n != 2 {
		t.Fatalf("%d leader elections, want 2: the standby must wait for the lease", n)
	}
	// Every line the orchestrators logged has each key once.
	if n := assertLogKeysOnce(t, leader.LogPath) + assertLogKeysOnce(t, standby.LogPath); n < 10 {
		t.Errorf("only %d log lines checked", n)
	}
}

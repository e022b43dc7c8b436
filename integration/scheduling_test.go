package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

// worker answers every goal with a Note (a dead end: nothing bids on it),
// so only the goals' claims take scheduler slots.
func schedulingConfig(orch, workerCmd, worker string) string {
	if workerCmd == "" {
		workerCmd = `["sett-writer", "--type", "Note"]`
	}
	return `version: "1.0"
orchestrator:
  bid_timeout: 2s
  lease_ttl: 3s
` + orch + `
agents:
  worker: {command: ` + workerCmd + `, bidding_strategy: exclusive, consumes: ["GoalDefined"]` + worker + `}
`
}

// postGoals writes goals with the given priorities and returns their ids
// in posting order.
func postGoals(t *testing.T, s *stacktest.Stack, priorities ...int) []string {
	t.Helper()
	var ids []string
	for i, p := range priorities {
		g := blackboard.NewGoal(fmt.Sprintf("goal %d (priority %d)", i, p), p, "user", nil)
		if err := s.BB.CreateArtefact(context.Background(), g, blackboard.WriteAuth{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, g.ID)
	}
	return ids
}

func waitWaiting(t *testing.T, s *stacktest.Stack, n int64) {
	t.Helper()
	s.Eventually(wait, fmt.Sprintf("%d claims waiting in the scheduler", n), func() bool {
		c, err := s.BB.CountScheduler(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return c.Waiting == n
	})
}

// grantOrder lists the workflows whose claims were granted, in the order
// of the claim_granted events.
func grantOrder(t *testing.T, s *stacktest.Stack) []string {
	t.Helper()
	var out []string
	for _, e := range s.Events(blackboard.EventClaimGranted) {
		out = append(out, e.WorkflowID)
	}
	return out
}

func TestPauseHoldsEveryGrantUntilResume(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, schedulingConfig("", "", ""))
	s.Up("worker")
	ctx := context.Background()
	if changed, err := s.BB.Pause(ctx, "ops", "maintenance", blackboard.ControlFromCLI); err != nil || !changed {
		t.Fatalf("pause: changed %v, %v", changed, err)
	}
	ids := postGoals(t, s, 0, 0, 0)
	waitWaiting(t, s, 3)
	if n := len(s.Events(blackboard.EventClaimGranted)); n != 0 {
		t.Fatalf("%d grants while paused, want none", n)
	}
	for _, e := range s.Events(blackboard.EventClaimWaiting) {
		if e.Field("reason") != "paused" {
			t.Errorf("claim_waiting %+v, want reason paused", e)
		}
	}
	if changed, err := s.BB.Resume(ctx, "ops", blackboard.ControlFromCLI); err != nil || !changed {
		t.Fatalf("resume: changed %v, %v", changed, err)
	}
	for _, id := range ids {
		if w := s.WaitWorkflow(id, wait); w.Status != blackboard.WorkflowCompleted {
			t.Errorf("workflow %s %s (%s), want completed", id, w.Status, w.Outcome)
		}
	}
	waitWaiting(t, s, 0)
}

// TestPauseLetsRunningToolsFinish pauses while a tool runs: its result is
// stored, and the work that result starts waits for the resume.
func TestPauseLetsRunningToolsFinish(t *testing.T) {
	t.Parallel()
	config := `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 3s}
agents:
  planner: {command: ["sh", "-c", "while [ ! -f release ]; do sleep 0.02; done; exec sett-writer --type Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  coder: {command: ["sett-writer", "--type", "CodeChange"], bidding_strategy: exclusive, consumes: ["Plan"]}
`
	s := stacktest.New(t, config)
	s.Up("planner", "coder")
	ctx := context.Background()
	wf := s.PostGoal("pause in the middle")
	s.WaitEvent(blackboard.EventClaimGranted, func(e blackboard.Event) bool { return e.WorkflowID == wf }, wait)
	if _, err := s.BB.Pause(ctx, "ops", "", blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitWaiting(t, s, 1) // the Plan's claim, behind the pause
	if plans := stacktest.OfType(s.Artefacts(wf), "Plan"); len(plans) != 1 {
		t.Fatalf("%d plans: the running tool did not finish under the pause", len(plans))
	}
	if n := len(stacktest.OfType(s.Artefacts(wf), "CodeChange")); n != 0 {
		t.Fatalf("%d CodeChanges while paused", n)
	}
	if _, err := s.BB.Resume(ctx, "ops", blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
}

// TestStopFilePausesAndResumes does the same through .sett_stop in the
// workspace; a person's pause is not lifted by deleting the file.
func TestStopFilePausesAndResumes(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, schedulingConfig("", "", ""))
	s.Up("worker")
	ctx := context.Background()
	stop := filepath.Join(s.Dir, ".sett_stop")
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.Eventually(wait, "the stop file to pause the instance", func() bool {
		p, err := s.BB.GetPauseState(ctx)
		return err == nil && p.Paused && p.Source == blackboard.ControlFromStopFile
	})
	ids := postGoals(t, s, 0)
	waitWaiting(t, s, 1)
	if err := os.Remove(stop); err != nil {
		t.Fatal(err)
	}
	if w := s.WaitWorkflow(ids[0], wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed after the stop file went", w.Status, w.Outcome)
	}
	// A person's pause stays when a stop file comes and goes.
	if _, err := s.BB.Pause(ctx, "ops", "by hand", blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(stop); err != nil {
		t.Fatal(err)
	}
	ids = postGoals(t, s, 0)
	waitWaiting(t, s, 1)
	if p, err := s.BB.GetPauseState(ctx); err != nil || !p.Paused || p.Source != blackboard.ControlFromCLI {
		t.Fatalf("pause %+v (%v), want the person's pause kept", p, err)
	}
}

// TestConcurrencyLimitGrantsInPriorityOrder queues 30 goals of mixed
// priority behind max_concurrent_claims: 1 and checks that grants follow
// the priorities (ties by age), and that a high-priority goal posted
// while others wait overtakes them.
func TestConcurrencyLimitGrantsInPriorityOrder(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, schedulingConfig("  max_concurrent_claims: 1", "", ""))
	s.Up("worker")
	ctx := context.Background()
	if _, err := s.BB.Pause(ctx, "test", "", blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	var prios []int
	for i := 0; i < 30; i++ {
		prios = append(prios, []int{0, 5, 10, 40, 15, 20}[i%6])
	}
	ids := postGoals(t, s, prios...)
	waitWaiting(t, s, 30)
	// What must come out: by priority, then by age (posting order).
	want := make([]int, len(ids))
	for i := range want {
		want[i] = i
	}
	sort.SliceStable(want, func(a, b int) bool { return prios[want[a]] > prios[want[b]] })
	if _, err := s.BB.Resume(ctx, "test", blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	// Stop after the first ten grants to post a goal that must overtake
	// the remaining twenty.
	s.Eventually(wait, "ten grants", func() bool { return len(grantOrder(t, s)) >= 10 })
	if _, err := s.BB.Pause(ctx, "test", "", blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	urgent := postGoals(t, s, 99)[0]
	s.Eventually(wait, "the urgent goal to wait", func() bool {
		ws, err := s.BB.WaitingClaims(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.ClaimID == blackboard.DeriveID("claim", urgent) {
				return true
			}
		}
		return false
	})
	before := len(grantOrder(t, s))
	if _, err := s.BB.Resume(ctx, "test", blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	for _, id := range append(ids, urgent) {
		if w := s.WaitWorkflow(id, wait); w.Status != blackboard.WorkflowCompleted {
			t.Fatalf("workflow %s %s (%s)", id, w.Status, w.Outcome)
		}
	}
	got := grantOrder(t, s)
	if len(got) != 31 {
		t.Fatalf("%d grants, want 31", len(got))
	}
	if got[before] != urgent {
		t.Errorf("grant %d after the urgent goal arrived went to %s, want the urgent goal %s", before+1, got[before], urgent)
	}
	rest := slices.Delete(slices.Clone(got), before, before+1)
	var wantIDs []string
	for _, i := range want {
		wantIDs = append(wantIDs, ids[i])
	}
	if !slices.Equal(rest, wantIDs) {
		t.Errorf("grant order (priorities):\n got %v\nwant %v", priosOf(rest, ids, prios), priosOf(wantIDs, ids, prios))
	}
}

func priosOf(order, ids []string, prios []int) []string {
	var out []string
	for _, id := range order {
		i := slices.Index(ids, id)
		out = append(out, strconv.Itoa(prios[i])+"#"+strconv.Itoa(i))
	}
	return out
}

// TestAgentCapacityQueuesGrants gives an agent one slot and three goals:
// one grant reaches its inbox, two wait for the slot and follow one by one.
func TestAgentCapacityQueuesGrants(t *testing.T) {
	t.Parallel()
	cmd := `["sh", "-c", "while [ ! -f release ]; do sleep 0.02; done; exec sett-writer --type Note"]`
	s := stacktest.New(t, schedulingConfig("", cmd, ", max_concurrent: 1"))
	s.Up("worker")
	ctx := context.Background()
	ids := postGoals(t, s, 0, 0, 0)
	s.Eventually(wait, "one grant held and two waiting for the agent", func() bool {
		q, held, err := s.BB.AgentQueues(ctx, []string{"worker"})
		if err != nil {
			t.Fatal(err)
		}
		return held["worker"] == 1 && len(q["worker"]) == 2
	})
	inbox, err := s.BB.InboxLengths(ctx, []string{"worker"})
	if err != nil {
		t.Fatal(err)
	}
	if inbox["worker"] > 1 {
		t.Errorf("%d entries in the agent's inbox, want at most the one grant it can run", inbox["worker"])
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if w := s.WaitWorkflow(id, wait); w.Status != blackboard.WorkflowCompleted {
			t.Errorf("workflow %s %s (%s), want completed", id, w.Status, w.Outcome)
		}
	}
	q, held, err := s.BB.AgentQueues(ctx, []string{"worker"})
	if err != nil {
		t.Fatal(err)
	}
	if held["worker"] != 0 || len(q["worker"]) != 0 {
		t.Errorf("after the work: %d held, %d waiting; want both 0", held["worker"], len(q["worker"]))
	}
}

// TestCancelStopsARunningTool cancels a workflow whose tool sleeps for
// five minutes: the tool's process ends, no claim stays open.
func TestCancelStopsARunningTool(t *testing.T) {
	t.Parallel()
	cmd := `["sh", "-c", "echo $$ > tool.pid; exec sleep 300"]`
	s := stacktest.New(t, schedulingConfig("", cmd, ", stop_grace: 1s"))
	s.Up("worker")
	ctx := context.Background()
	wf := s.PostGoal("sleep for a long time")
	var pid int
	s.Eventually(wait, "the tool to start", func() bool {
		b, err := os.ReadFile(filepath.Join(s.Dir, "tool.pid"))
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	if ended, err := s.BB.EndWorkflow(ctx, wf, blackboard.WorkflowCancelled, "cancelled by the test", 1); err != nil || !ended {
		t.Fatalf("cancel: ended %v, %v", ended, err)
	}
	s.Eventually(wait, "the tool process to end", func() bool {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		return os.IsNotExist(err)
	})
	s.Eventually(wait, "no open claim", func() bool {
		for _, c := range s.Claims(wf) {
			if !c.Status.Final() {
				return false
			}
		}
		return true
	})
	if w, err := s.BB.GetWorkflow(ctx, wf); err != nil || w.Status != blackboard.WorkflowCancelled {
		t.Fatalf("workflow %+v (%v), want cancelled", w, err)
	}
}

// TestPauseSurvivesAnOrchestratorRestart pauses, restarts the
// orchestrator, and checks that nothing is granted until the resume.
func TestPauseSurvivesAnOrchestratorRestart(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, schedulingConfig("", "", ""))
	orch, _ := s.Up("worker")
	ctx := context.Background()
	if _, err := s.BB.Pause(ctx, "ops", "", blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	orch.Kill()
	ids := postGoals(t, s, 0, 3)
	orch.Restart()
	waitWaiting(t, s, 2)
	if n := len(s.Events(blackboard.EventClaimGranted)); n != 0 {
		t.Fatalf("%d grants while paused across a restart", n)
	}
	if _, err := s.BB.Resume(ctx, "ops", blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if w := s.WaitWorkflow(id, wait); w.Status != blackboard.WorkflowCompleted {
			t.Errorf("workflow %s %s (%s)", id, w.Status, w.Outcome)
		}
	}
}

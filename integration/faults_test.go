package integration

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

// TestRedisOutageDuringBidding kills Redis (AOF, like a deployment) for
// two seconds exactly when the only bidder writes its bid: the bid is
// retried in place until the bid deadline, so the agent is granted and
// the workflow completes with its work done (before, the bid counted as
// ignore and the workflow "completed" with nothing done).
func TestRedisOutageDuringBidding(t *testing.T) {
	t.Parallel()
	srv, err := redistest.NewServer(redistest.ServerOptions{AppendOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	gates := t.TempDir()
	bidding, release := filepath.Join(gates, "bidding"), filepath.Join(gates, "go")
	// The bid script says when it is deciding and answers only when let
	// go, so that the outage starts right before the bid write.
	script := `["/bin/sh", "-c", "touch ` + bidding + `; while [ ! -e ` + release + ` ]; do sleep 0.05; done; echo exclusive"]`
	s := stacktest.New(t, `version: "1.0"
orchestrator: {bid_timeout: 10s}
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bid_script: `+script+`}
`, stacktest.Options{Redis: srv})
	_, cubs := s.Up("planner")
	wf := s.PostGoal("survive a blip")
	s.Eventually(wait, "the bid script to start", func() bool {
		_, err := os.Stat(bidding)
		return err == nil
	})
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The fault itself: Redis stays down until the cub has failed its bid
	// write three times (its backoff spreads them over about two seconds),
	// so the outage is measured by what the cub saw, not by a clock.
	s.Eventually(wait, "the cub to fail its bid write three times", func() bool {
		log, _ := os.ReadFile(cubs["planner"].LogPath)
		return strings.Count(string(log), "submitting the bid failed; retrying until the bid deadline") >= 3
	})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	bids, err := s.BB.GetBids(context.Background(), blackboard.DeriveID("claim", wf))
	if err != nil || bids["planner"] != blackboard.BidExclusive {
		t.Fatalf("bids %v (%v), want planner=exclusive", bids, err)
	}
	if n := len(stacktest.OfType(s.Artefacts(wf), "Plan")); n != 1 {
		t.Fatalf("%d Plans, want the only bidder's one", n)
	}
}

// TestWorkflowsEndedCountsCompleted: workflows_ended_total counts a
// completed workflow (it used to count only failed and cancelled ones).
func TestWorkflowsEndedCountsCompleted(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, `version: "1.0"
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
`)
	orch, _ := s.Up("planner")
	wf := s.PostGoal("count me")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	const want = `sett_orchestrator_workflows_ended_total{status="completed"} 1`
	var last string
	s.Eventually(wait, "workflows_ended_total to count the completed workflow", func() bool {
		resp, err := http.Get("http://" + orch.HTTPAddr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		last = string(body)
		return strings.Contains(last, want)
	})
	if strings.Contains(last, `workflows_ended_total{status="failed"}`) {
		t.Errorf("a failed workflow was counted:\n%s", last)
	}
}

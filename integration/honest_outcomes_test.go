package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

// These tests pin the honest-outcomes rules: a workflow is completed only
// when its work was done. An agent that cannot answer during bidding —
// Redis away, its cub frozen, a required reviewer never started — makes
// the claim wait and ask again, then fail naming the agent; it never
// turns into a "dead end" that completes the workflow.

// twoStage is a goal → Plan → CodeChange pipeline with a short bid
// deadline. The orchestrator records the agents' rule-decided bids (the
// default decide_rule_bids), so the coder is granted the Plan at once.
const twoStage = `version: "1.0"
orchestrator:
  bid_timeout: 2s
  no_bid_timeout: 2m
  lease_ttl: 3s
  agent_heartbeat_ttl: 30s
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  coder: {command: ["sett-writer", "--type", "CodeChange"], bidding_strategy: exclusive, consumes: ["Plan"]}
`

// askedTwoStage is twoStage with every live consumer asked to bid
// (decide_rule_bids: false): the tests of a silent bidder.
var askedTwoStage = strings.Replace(twoStage, "orchestrator:\n", "orchestrator:\n  decide_rule_bids: false\n", 1)

// planClaim waits until the workflow's Plan has its claim collecting bids,
// and returns the claim.
func planClaim(t *testing.T, s *stacktest.Stack, wf string) *blackboard.Claim {
	t.Helper()
	ctx := context.Background()
	var cl *blackboard.Claim
	s.Eventually(60*time.Second, "the Plan's claim collecting bids", func() bool {
		for _, a := range listWorkflow(t, s.BB, wf) {
			if a.Type != "Plan" {
				continue
			}
			id, err := s.BB.ClaimForArtefact(ctx, a.ID)
			if err != nil {
				return false
			}
			c, err := s.BB.GetClaim(ctx, id)
			if err == nil && c.Status == blackboard.ClaimPendingConsensus {
				cl = c
				return true
			}
		}
		return false
	})
	return cl
}

// assertWorkDone checks that the workflow completed with its CodeChange.
func assertWorkDone(t *testing.T, s *stacktest.Stack, wf string) {
	t.Helper()
	w := s.WaitWorkflow(wf, 120*time.Second)
	arts := listWorkflow(t, s.BB, wf)
	if w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s: %s (%s), want completed with its work; artefacts %v", wf, w.Status, w.Outcome, types(arts))
	}
	n := 0
	for _, a := range arts {
		if a.Type == "CodeChange" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("workflow %s completed with %d CodeChange artefacts, want 1 (artefacts %v; outcome %q)", wf, n, types(arts), w.Outcome)
	}
	if !strings.Contains(w.Outcome, "CodeChange: no agent consumes this type") {
		t.Errorf("outcome %q does not name the configured end of the chain", w.Outcome)
	}
}

// countEvents counts the instance's events of type typ for claim.
func countEvents(t *testing.T, bb *blackboard.Client, typ blackboard.EventType, claim string) int {
	t.Helper()
	evs, err := bb.ReadEvents(context.Background(), "0", 100000, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == typ && (claim == "" || e.ClaimID == claim) {
			n++
		}
	}
	return n
}

// TestRedisOutageDuringBiddingDoesNotEndTheChain: Redis is unreachable for
// 10 s (killed, restarted from its append-only file) while the Plan's claim
// collects bids with bid_timeout 2s. Before, the claim ended as "No agent
// bid (dead end)" and the workflow completed without code; now the bids
// are asked for again and the code is written.
func TestRedisOutageDuringBiddingDoesNotEndTheChain(t *testing.T) {
	t.Parallel()
	srv, err := redistest.NewServer(redistest.ServerOptions{AppendOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	s := stacktest.New(t, askedTwoStage, stacktest.Options{Redis: srv})
	_, cubs := s.Up("planner", "coder")
	// Hold the coder's bid: its cub is frozen until Redis is gone.
	cubs["coder"].Freeze()
	t.Cleanup(cubs["coder"].Thaw)
	wf := s.PostGoal("Add a /health endpoint")
	cl := planClaim(t, s, wf)
	if !contains(cl.ExpectedBidders, "coder") {
		t.Fatalf("the Plan's claim expects %v, want the coder among them", cl.ExpectedBidders)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	cubs["coder"].Thaw()
	// The outage itself: five bid deadlines long.
	<-time.After(10 * time.Second)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	assertWorkDone(t, s, wf)
}

// TestFrozenConsumerAcrossTheBidWindow: the only consumer of the Plan is
// asked to bid (decide_rule_bids: false) and frozen (SIGSTOP) for three
// bid deadlines, then resumed. Its silence is not an "ignore": the claim
// asks again, and the work is done when it is back.
func TestFrozenConsumerAcrossTheBidWindow(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, askedTwoStage)
	_, cubs := s.Up("planner", "coder")
	cubs["coder"].Freeze()
	t.Cleanup(cubs["coder"].Thaw)
	wf := s.PostGoal("Add a /health endpoint")
	cl := planClaim(t, s, wf)
	// Three bid deadlines pass with the coder frozen: the claim asks again
	// at least twice meanwhile.
	s.Eventually(60*time.Second, "two rounds of bid requests", func() bool {
		return countEvents(t, s.BB, blackboard.EventBidsRequestedAgain, cl.ID) >= 2
	})
	got, err := s.BB.GetClaim(context.Background(), cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != blackboard.ClaimPendingConsensus {
		t.Fatalf("with its consumer frozen the Plan's claim is %s (%s %s), want still collecting bids", got.Status,
			got.CompletionReason, got.TerminationReason)
	}
	cubs["coder"].Thaw()
	assertWorkDone(t, s, wf)
}

// planClaimID waits until the workflow's Plan has its claim, in any
// status, and returns its id.
func planClaimID(t *testing.T, s *stacktest.Stack, wf string) string {
	t.Helper()
	var id string
	s.Eventually(60*time.Second, "the Plan's claim", func() bool {
		for _, a := range listWorkflow(t, s.BB, wf) {
			if a.Type == "Plan" {
				c, err := s.BB.ClaimForArtefact(context.Background(), a.ID)
				id = c
				return err == nil
			}
		}
		return false
	})
	return id
}

// grantedByRuleBid checks that the Plan's claim went to the coder on the
// bid its rules decide: recorded at creation, the coder never asked.
func grantedByRuleBid(t *testing.T, s *stacktest.Stack, claimID string) {
	t.Helper()
	var cl *blackboard.Claim
	s.Eventually(30*time.Second, "the Plan's claim granted", func() bool {
		c, err := s.BB.GetClaim(context.Background(), claimID)
		cl = c
		return err == nil && c.Status != blackboard.ClaimPendingConsensus
	})
	if cl.GrantedExclusiveAgent != "coder" || len(cl.ExpectedBidders) != 0 {
		t.Fatalf("the Plan's claim is %s granted to %q, expecting bids from %v; want the coder granted, nobody asked",
			cl.Status, cl.GrantedExclusiveAgent, cl.ExpectedBidders)
	}
	decided := false
	for _, e := range s.Events(blackboard.EventBidsDecided) {
		decided = decided || (e.ClaimID == claimID && strings.Contains(e.Field("bids"), "coder=exclusive"))
	}
	if !decided {
		t.Fatal("no bids_decided event records coder=exclusive on the Plan's claim")
	}
}

// TestFrozenConsumerGrantedByRuleBid: the only consumer of the Plan is
// frozen (SIGSTOP) while its heartbeat still counts: a wedged agent. Its
// bid is decided by its rules, so it is granted the Plan without being
// asked and never takes the grant. The lease check finds that, grants it
// again, and after max_grant_attempts fails the workflow naming it — in
// bounded time (two lease checks), and never "completed".
func TestFrozenConsumerGrantedByRuleBid(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, twoStage)
	_, cubs := s.Up("planner", "coder")
	cubs["coder"].Freeze()
	t.Cleanup(cubs["coder"].Thaw)
	wf := s.PostGoal("Add a /health endpoint")
	claimID := planClaimID(t, s, wf)
	grantedByRuleBid(t, s, claimID)
	w := s.WaitWorkflow(wf, 60*time.Second)
	if w.Status != blackboard.WorkflowFailed || !strings.Contains(w.Outcome, "no result from coder after 2 grant attempts") {
		t.Fatalf("workflow %s (%s), want failed naming the coder after 2 grant attempts", w.Status, w.Outcome)
	}
	if n := countEvents(t, s.BB, blackboard.EventLeaseLost, claimID); n != 1 {
		t.Errorf("%d lease_lost events on the Plan's claim, want 1 (the grant given again once)", n)
	}
	if n := countEvents(t, s.BB, blackboard.EventClaimTerminatedLeaseExhausted, claimID); n != 1 {
		t.Errorf("%d claim_terminated_lease_exhausted events on the Plan's claim, want 1", n)
	}
	for _, a := range listWorkflow(t, s.BB, wf) {
		if a.Type == "CodeChange" {
			t.Errorf("a CodeChange was written although the coder never ran")
		}
	}
}

// TestFrozenConsumerGrantedByRuleBidResumes: as above, but the coder is
// resumed once its first grant was found lost: it takes the grant given
// again and the work is done.
func TestFrozenConsumerGrantedByRuleBidResumes(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, strings.Replace(twoStage, "orchestrator:\n", "orchestrator:\n  max_grant_attempts: 3\n", 1))
	_, cubs := s.Up("planner", "coder")
	cubs["coder"].Freeze()
	t.Cleanup(cubs["coder"].Thaw)
	wf := s.PostGoal("Add a /health endpoint")
	claimID := planClaimID(t, s, wf)
	grantedByRuleBid(t, s, claimID)
	s.Eventually(60*time.Second, "the coder's first grant found lost", func() bool {
		return countEvents(t, s.BB, blackboard.EventLeaseLost, claimID) >= 1
	})
	cubs["coder"].Thaw()
	assertWorkDone(t, s, wf)
}

// reviewed is a Plan pipeline with reviewers; the coder writes the code
// once the review approves.
const reviewed = `version: "1.0"
orchestrator:
  bid_timeout: 1s
  no_bid_timeout: 4s
  lease_ttl: 3s
  review_policy: {min_reviews: %d}
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  coder: {command: ["sett-writer", "--type", "CodeChange"], bidding_strategy: exclusive, consumes: ["Plan"]}
  r-security: {command: ["sett-reviewer"], bidding_strategy: review, consumes: ["Plan"], review: {required: true, blocking: true}}
  r-style: {command: ["sett-reviewer"], bidding_strategy: review, consumes: ["Plan"]}
`

// assertFailedNaming waits for the workflow to end and checks that it
// failed with every named agent in its reason.
func assertFailedNaming(t *testing.T, s *stacktest.Stack, wf string, agents ...string) {
	t.Helper()
	w := s.WaitWorkflow(wf, 120*time.Second)
	if w.Status != blackboard.WorkflowFailed {
		t.Fatalf("workflow %s: %s (%s), want failed: its required review never happened (artefacts %v)",
			wf, w.Status, w.Outcome, types(listWorkflow(t, s.BB, wf)))
	}
	for _, a := range agents {
		if !strings.Contains(w.Outcome, a) {
			t.Errorf("the failure %q does not name %s", w.Outcome, a)
		}
	}
	for _, a := range listWorkflow(t, s.BB, wf) {
		if a.Type == "CodeChange" {
			t.Errorf("code was written although the Plan's review never happened")
		}
	}
	if n := countEvents(t, s.BB, blackboard.EventClaimTerminatedNoAnswer, ""); n != 1 {
		t.Errorf("%d claim_terminated_no_answer events, want 1", n)
	}
}

// TestRequiredReviewerNeverStarted: the required reviewer's cub is never
// started. Before, the other reviewer's approval carried the Plan and the
// workflow completed; now the claim waits for it, then fails naming it.
func TestRequiredReviewerNeverStarted(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, fmt.Sprintf(reviewed, 1))
	s.Up("planner", "coder", "r-style")
	wf := s.PostGoal("Add a /health endpoint")
	assertFailedNaming(t, s, wf, "r-security")
}

// TestAllReviewersDown: no reviewer runs. Before, the Plan went straight
// to the coder and the workflow completed unreviewed (or, without a
// coder, as a dead end); now it fails naming the reviewers.
func TestAllReviewersDown(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, fmt.Sprintf(reviewed, 2))
	s.Up("planner", "coder")
	wf := s.PostGoal("Add a /health endpoint")
	assertFailedNaming(t, s, wf, "r-security", "r-style")
}

// TestConsumerStartedLateIsWaitedFor: the coder is not running when the
// Plan is written; it starts while the claim asks again, and the work is
// done.
func TestConsumerStartedLateIsWaitedFor(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, twoStage)
	s.Up("planner")
	wf := s.PostGoal("Add a /health endpoint")
	cl := planClaim(t, s, wf)
	if !contains(cl.AbsentConsumers, "coder") {
		t.Fatalf("the Plan's claim records absent consumers %v, want the coder", cl.AbsentConsumers)
	}
	s.Eventually(60*time.Second, "a round of bid requests", func() bool {
		return countEvents(t, s.BB, blackboard.EventBidsRequestedAgain, cl.ID) >= 1
	})
	coder := s.StartCub("coder")
	s.WaitReady(coder)
	assertWorkDone(t, s, wf)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

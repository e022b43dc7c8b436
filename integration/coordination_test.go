package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

const wait = 60 * time.Second

func TestPhaseSkipping(t *testing.T) {
	t.Parallel()
	// No agent bids claim (parallel) on the Plan, and nobody reviews the
	// goal: the goal's claim goes straight to exclusive and the plan's
	// claim from review straight to exclusive.
	s := stacktest.New(t, `version: "1.0"
orchestrator: {bid_timeout: 2s}
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  reviewer: {command: ["sett-reviewer"], bidding_strategy: review, consumes: ["Plan"]}
  coder: {command: ["sett-writer", "--type", "CodeChange"], bidding_strategy: exclusive, consumes: ["Plan"]}
`)
	s.Up("planner", "reviewer", "coder")
	wf := s.PostGoal("skip what has no bidders")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	paths := transitionPaths(s)
	goalClaim := blackboard.DeriveID("claim", wf)
	plan := stacktest.OfType(s.Artefacts(wf), "Plan")[0]
	planClaim := blackboard.DeriveID("claim", plan.ID)
	for _, tc := range []struct {
		name, claim, want string
	}{
		{"goal skips review and parallel", goalClaim, "pending_consensus>pending_exclusive>complete"},
		{"plan skips parallel", planClaim, "pending_consensus>pending_review>pending_exclusive>complete"},
	} {
		if got := paths[tc.claim]; got != tc.want {
			t.Errorf("%s: transitions %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, cl := range s.Claims(wf) {
		if len(cl.GrantedParallelAgents) > 0 {
			t.Errorf("claim %s granted a parallel phase %v", cl.ID, cl.GrantedParallelAgents)
		}
	}
}

// transitionPaths returns, per claim, its statuses joined with '>'.
func transitionPaths(s *stacktest.Stack) map[string]string {
	out := map[string]string{}
	for _, e := range s.Events(blackboard.EventClaimTransitioned) {
		if out[e.ClaimID] == "" {
			out[e.ClaimID] = e.Field("from")
		}
		out[e.ClaimID] += ">" + e.Field("to")
	}
	return out
}

func TestExclusiveTieBreak(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, `version: "1.0"
orchestrator: {bid_timeout: 2s}
agents:
  coder-b: {command: ["sett-writer", "--type", "CodeChange"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  coder-a: {command: ["sett-writer", "--type", "CodeChange"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  coder-c: {command: ["sett-writer", "--type", "CodeChange"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
`)
	s.Up("coder-b", "coder-a", "coder-c")
	wf := s.PostGoal("three want it, one gets it")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	// The three bids follow from their rules (decide_rule_bids, the
	// default): the claim's creation names all three and stores the one
	// that can win, the lowest name's.
	claimID := blackboard.DeriveID("claim", wf)
	bids, err := s.BB.GetBids(context.Background(), claimID)
	if err != nil {
		t.Fatal(err)
	}
	if len(bids) != 1 || bids["coder-a"] != blackboard.BidExclusive {
		t.Errorf("stored bids %v, want coder-a=exclusive alone", bids)
	}
	var named string
	for _, e := range s.Events(blackboard.EventBidsDecided) {
		if e.ClaimID == claimID {
			named = e.Field("bids")
		}
	}
	if named != "coder-a=exclusive,coder-b=exclusive,coder-c=exclusive" {
		t.Errorf("bids_decided names %q, want all three exclusive", named)
	}
	code := stacktest.OfType(s.Artefacts(wf), "CodeChange")
	if len(code) != 1 || code[0].ProducedByAgent != "coder-a" {
		t.Fatalf("code changes %+v, want exactly one by coder-a (lowest name)", code)
	}
}

// TestSilentAgentResolvedByBidTimeout: with every live consumer asked
// (decide_rule_bids: false), a hung agent's silence counts as ignore on a
// claim where another agent bid for the work (the goal), but on a claim
// it alone could take (the Plan) it is asked again and, after
// no_bid_timeout, the workflow fails naming it — never "completed" with
// the Plan left undone.
func TestSilentAgentResolvedByBidTimeout(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, `version: "1.0"
orchestrator: {bid_timeout: 1s, no_bid_timeout: 3s, decide_rule_bids: false}
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  sleepy: {command: ["sett-writer"], bidding_strategy: exclusive}
`)
	// sleepy is configured and looks alive (its heartbeat exists) but no
	// cub answers for it: a hung agent.
	ctx := context.Background()
	if err := s.BB.RegisterAgent(ctx, blackboard.Registration{Name: "sleepy", Role: "sleepy", Consumer: "nobody"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	s.Up("planner")
	wf := s.PostGoal("one agent never answers")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowFailed || !strings.Contains(w.Outcome, "sleepy") {
		t.Fatalf("workflow %s (%s), want failed naming sleepy: the Plan only it consumes was never done", w.Status, w.Outcome)
	}
	goalClaim := blackboard.DeriveID("claim", wf)
	timeouts := s.Events(blackboard.EventBidTimeout)
	var found bool
	for _, e := range timeouts {
		if e.ClaimID == goalClaim && e.Field("agents") == "sleepy" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no bid_timeout event naming sleepy on the goal's claim; got %+v", timeouts)
	}
	bids, err := s.BB.GetBids(ctx, goalClaim)
	if err != nil {
		t.Fatal(err)
	}
	if bids["sleepy"] != blackboard.BidIgnore || bids["planner"] != blackboard.BidExclusive {
		t.Fatalf("bids %v, want sleepy=ignore (timed out) and planner=exclusive", bids)
	}
	if len(stacktest.OfType(s.Artefacts(wf), "Plan")) != 1 {
		t.Fatal("the planner's work did not happen after the timeout")
	}
}

// TestGoalNobodyBidsOnFailsWorkflow: a goal no agent bids on did no work,
// so its workflow fails with a reason naming the goal's type — never
// "completed".
func TestGoalNobodyBidsOnFailsWorkflow(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, `version: "1.0"
agents:
  picky: {command: ["sett-writer"], bidding_strategy: exclusive, consumes: ["SomethingElse"]}
`)
	s.Up("picky")
	wf := s.PostGoal("nobody wants this")
	w := s.WaitWorkflow(wf, wait)
	if w.Status != blackboard.WorkflowFailed || !strings.Contains(w.Outcome, "GoalDefined") {
		t.Fatalf("workflow %s (%s), want failed with a reason naming GoalDefined", w.Status, w.Outcome)
	}
	cl, err := s.BB.GetClaim(context.Background(), blackboard.DeriveID("claim", wf))
	if err != nil {
		t.Fatal(err)
	}
	if cl.Status != blackboard.ClaimTerminated || !strings.Contains(cl.TerminationReason, "no agent bid on the goal (type GoalDefined)") {
		t.Fatalf("goal claim %s %q, want terminated naming the goal's type", cl.Status, cl.TerminationReason)
	}
	if n := len(s.Artefacts(wf)); n != 1 {
		t.Fatalf("%d artefacts, want only the goal", n)
	}
}

func TestToolFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		command string
		extra   string
		want    []string // all must appear in the Failure payload
	}{
		{"non-zero exit", `echo "disk full" >&2; exit 3`, "", []string{"exit_nonzero", "exit status 3", "disk full"}},
		{"not JSON", `echo "hello, I am not JSON"`, "", []string{"unreadable_output", "not JSON", "hello, I am not JSON"}},
		{"timeout", `exec sleep 30`, "timeout: 1s", []string{"timeout", "1s"}},
		{"20 MB of output", `head -c 20000000 /dev/zero | tr '\0' x`, "", []string{"stdout_too_large", "4194304"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// One attempt: this test is about how a failure is reported;
			// retries have their own tests.
			extra := ", retry: {max_attempts: 1}"
			if tc.extra != "" {
				extra += ", " + tc.extra
			}
			s := stacktest.New(t, `version: "1.0"
agents:
  broken: {command: ["/bin/sh", "-c", `+quote(tc.command)+`], bidding_strategy: exclusive, consumes: ["GoalDefined"]`+extra+`}
`)
			_, cubs := s.Up("broken")
			wf := s.PostGoal("this will fail")
			w := s.WaitWorkflow(wf, wait)
			if w.Status != blackboard.WorkflowFailed {
				t.Fatalf("workflow %s (%s), want failed", w.Status, w.Outcome)
			}
			failures := stacktest.OfType(s.Artefacts(wf), "ToolExecutionFailure")
			if len(failures) != 1 {
				t.Fatalf("%d ToolExecutionFailure artefacts, want 1", len(failures))
			}
			f := failures[0]
			for _, want := range tc.want {
				if !strings.Contains(f.Payload, want) {
					t.Errorf("failure payload lacks %q:\n%s", want, f.Payload)
				}
			}
			if f.StructuralType != blackboard.StructuralFailure || f.ProducedByAgent != "broken" {
				t.Errorf("failure artefact %s by %s", f.StructuralType, f.ProducedByAgent)
			}
			cl, err := s.BB.GetClaim(context.Background(), blackboard.DeriveID("claim", wf))
			if err != nil {
				t.Fatal(err)
			}
			if cl.Status != blackboard.ClaimTerminated || !strings.Contains(cl.TerminationReason, f.ID) ||
				!strings.Contains(cl.TerminationReason, "agent failure") {
				t.Errorf("claim %s %q, want terminated naming the failure %s", cl.Status, cl.TerminationReason, f.ID)
			}
			if !cubs["broken"].Ready() {
				t.Error("the cub is not ready after the tool failed")
			}
		})
	}
}

func quote(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

// gated is a sh command that waits for a file in the workspace before it
// runs the real tool, so a test can hold a workflow mid-flight.
func gated(gate, tool string) string {
	return `["/bin/sh", "-c", "while [ ! -e \"$SETT_WORKSPACE/` + gate + `\" ]; do sleep 0.05; done; exec ` + tool + `"]`
}

func openGate(t *testing.T, s *stacktest.Stack, gate string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.Dir, gate), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitGranted waits until the claim of artefact has granted agent.
func waitGranted(t *testing.T, s *stacktest.Stack, artefactID, agent string) {
	t.Helper()
	claimID := blackboard.DeriveID("claim", artefactID)
	s.WaitEvent(blackboard.EventClaimGranted, func(e blackboard.Event) bool {
		return e.ClaimID == claimID && strings.Contains(","+e.Field("agents")+",", ","+agent+",")
	}, wait)
}

// assertNoDuplicates checks that the workflow holds the expected number of
// artefacts per type and one claim per claimable artefact.
func assertNoDuplicates(t *testing.T, s *stacktest.Stack, wf string, want map[string]int) {
	t.Helper()
	arts := s.Artefacts(wf)
	got := map[string]int{}
	claimable := 0
	for _, a := range arts {
		got[a.Type]++
		if a.StructuralType.Claimable() {
			claimable++
		}
	}
	for typ, n := range want {
		if got[typ] != n {
			t.Errorf("%d %s artefacts, want %d (all: %v)", got[typ], typ, n, got)
		}
	}
	regular := 0
	perArtefact := map[string]int{}
	for _, cl := range s.Claims(wf) {
		if !cl.IsFeedback() {
			regular++
			perArtefact[cl.ArtefactID]++
		}
	}
	if regular != claimable {
		t.Errorf("%d regular claims for %d claimable artefacts", regular, claimable)
	}
	for id, n := range perArtefact {
		if n != 1 {
			t.Errorf("artefact %s has %d claims", id, n)
		}
	}
}

func TestOrchestratorKilledMidWorkflow(t *testing.T) {
	t.Parallel()
	config := `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 5s}
agents:
  planner: {command: ` + gated("go", "sett-writer --type Plan") + `, bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  reviewer: {command: ["sett-reviewer"], bidding_strategy: review, consumes: ["Plan"]}
  coder: {command: ["sett-writer", "--type", "CodeChange"], bidding_strategy: exclusive, consumes: ["Plan"]}
`
	want := map[string]int{"GoalDefined": 1, "Plan": 1, "Review": 1, "CodeChange": 1}

	t.Run("kill -9 while a tool runs", func(t *testing.T) {
		t.Parallel()
		s := stacktest.New(t, config)
		orch, _ := s.Up("planner", "reviewer", "coder")
		wf := s.PostGoal("survive a crash")
		waitGranted(t, s, wf, "planner")
		orch.Kill()
		openGate(t, s, "go") // the plan is written while no orchestrator runs
		orch.Restart()
		if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
			t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
		}
		assertNoDuplicates(t, s, wf, want)
	})

	// Failpoints stop the orchestrator exactly between two writes, where a
	// kill -9 would rarely land by chance.
	for _, fp := range []string{"claim-created", "granted-exclusive", "granted-review"} {
		t.Run("crash at "+fp, func(t *testing.T) {
			t.Parallel()
			var env []string
			if fp == "granted-review" {
				// The review grant here would be made by the last bid's
				// script; crash the orchestrator where it grants instead.
				env = []string{"SETT_DISABLE_BID_GRANTS=true"}
			}
			s := stacktest.New(t, config)
			openGate(t, s, "go")
			cubs := map[string]*stacktest.Proc{}
			for _, a := range []string{"planner", "reviewer", "coder"} {
				cubs[a] = s.StartCub(a)
			}
			s.WaitReady(cubs["planner"], cubs["reviewer"], cubs["coder"])
			orch := s.StartOrchestratorWith(append([]string{"SETT_FAILPOINT=" + fp}, env...)...)
			s.WaitReady(orch)
			wf := s.PostGoal("crash at " + fp)
			if code := orch.WaitExit(wait); code != 137 {
				t.Fatalf("orchestrator exit code %d, want 137 from the failpoint", code)
			}
			orch.SetEnv(env...)
			orch.Restart()
			if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
				t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
			}
			assertNoDuplicates(t, s, wf, want)
		})
	}
}

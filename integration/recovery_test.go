package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

// firstRunHangs is a tool that hangs on its first run (leaving a marker)
// and works on later runs: the first attempt dies with its cub.
const firstRunHangs = `["/bin/sh", "-c", "if [ -e \"$SETT_WORKSPACE/first-run\" ]; then exec sett-writer --type Plan; fi; touch \"$SETT_WORKSPACE/first-run\"; exec sleep 20"]`

func TestCubKilledWhileToolRuns(t *testing.T) {
	t.Parallel()
	config := `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 1s, agent_heartbeat_ttl: 1s, max_grant_attempts: 2}
agents:
  planner: {command: ` + firstRunHangs + `, bidding_strategy: exclusive, consumes: ["GoalDefined"]}
`
	waitFirstRun := func(t *testing.T, s *stacktest.Stack) {
		s.Eventually(wait, "the tool's first run", func() bool {
			_, err := os.Stat(filepath.Join(s.Dir, "first-run"))
			return err == nil
		})
	}

	t.Run("lease expires and the grant is retried", func(t *testing.T) {
		t.Parallel()
		s := stacktest.New(t, config)
		_, cubs := s.Up("planner")
		wf := s.PostGoal("retry me")
		waitFirstRun(t, s)
		cubs["planner"].Kill()
		claimID := blackboard.DeriveID("claim", wf)
		lost := s.WaitEvent(blackboard.EventLeaseLost, func(e blackboard.Event) bool { return e.ClaimID == claimID }, wait)
		if lost.Agent != "planner" || lost.Field("attempt") != "2" {
			t.Fatalf("lease_lost event %+v, want planner attempt 2", lost)
		}
		cubs["planner"].Restart()
		if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
			t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
		}
		cl, err := s.BB.GetClaim(context.Background(), claimID)
		if err != nil {
			t.Fatal(err)
		}
		if cl.Attempts != 2 || cl.Status != blackboard.ClaimComplete {
			t.Fatalf("claim %s after %d attempts, want complete after 2", cl.Status, cl.Attempts)
		}
		plans := stacktest.OfType(s.Artefacts(wf), "Plan")
		if len(plans) != 1 || plans[0].Metadata["token"] != "2" {
			t.Fatalf("plans %+v, want one written under grant token 2", plans)
		}
	})

	t.Run("no cub comes back and the claim fails with a reason", func(t *testing.T) {
		t.Parallel()
		s := stacktest.New(t, config)
		_, cubs := s.Up("planner")
		wf := s.PostGoal("nobody will finish this")
		waitFirstRun(t, s)
		cubs["planner"].Kill()
		w := s.WaitWorkflow(wf, wait)
		if w.Status != blackboard.WorkflowFailed {
			t.Fatalf("workflow %s (%s), want failed", w.Status, w.Outcome)
		}
		cl, err := s.BB.GetClaim(context.Background(), blackboard.DeriveID("claim", wf))
		if err != nil {
			t.Fatal(err)
		}
		want := "Terminated: no result from planner after 2 grant attempts (work lease lost each time)."
		if cl.Status != blackboard.ClaimTerminated || cl.TerminationReason != want {
			t.Fatalf("claim %s %q, want terminated with %q", cl.Status, cl.TerminationReason, want)
		}
	})
}

func TestDuplicateEventsChangeNothing(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, pipeline)
	s.Up("planner", "reviewer", "auditor", "coder")
	wf := s.PostGoal("deliver every event twice")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	rdb := redistest.Raw(t)
	ctx := context.Background()
	waitConsumed(t, s, rdb)
	before := snapshot(t, rdb, s.BB.Keys().Prefix())

	// Deliver every event of the history to the orchestrator a second
	// time, in order (it reads its queue, which received each event it
	// acts on once already).
	events, err := rdb.XRange(ctx, s.BB.Keys().Events(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: s.BB.Keys().OrchestratorQueue(), Values: e.Values}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	waitConsumed(t, s, rdb)
	after := snapshot(t, rdb, s.BB.Keys().Prefix())
	if len(before) != len(after) {
		t.Errorf("%d keys before the replay, %d after", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("key %s changed:\nbefore %s\nafter  %s", k, v, after[k])
		}
	}
}

// waitConsumed waits until the orchestrator's group has read and
// acknowledged every entry of its queue.
func waitConsumed(t *testing.T, s *stacktest.Stack, rdb *redis.Client) {
	t.Helper()
	s.Eventually(wait, "orchestrator consumed every event", func() bool {
		groups, err := rdb.XInfoGroups(context.Background(), s.BB.Keys().OrchestratorQueue()).Result()
		if err != nil || len(groups) != 1 {
			return false
		}
		return groups[0].Lag == 0 && groups[0].Pending == 0
	})
}

// snapshot renders every key of the instance except the event log (which a
// replay appends to by definition) and the timers, as type:value text.
func snapshot(t *testing.T, rdb *redis.Client, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"*").Result() // test-only inspection; production code never uses KEYS
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		// Liveness (heartbeats, replica beats), leases and streams move by
		// themselves; the rest must not.
		if k == prefix+"events" || k == prefix+"orchestrator:queue" || strings.HasSuffix(k, ":heartbeat") || strings.HasSuffix(k, ":replicas") || strings.HasPrefix(k, prefix+"lease:") ||
			k == prefix+"orchestrator:leader" || strings.HasSuffix(k, ":inbox") {
			continue
		}
		typ, err := rdb.Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		switch typ {
		case "hash":
			v, err = rdb.HGetAll(ctx, k).Result()
		case "zset":
			v, err = rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "string":
			v, err = rdb.Get(ctx, k).Result()
		case "set":
			var m []string
			m, err = rdb.SMembers(ctx, k).Result()
			sort.Strings(m)
			v = m
		default:
			v = typ
		}
		if err != nil {
			t.Fatal(err)
		}
		out[k] = typ + ":" + fmt.Sprint(v)
	}
	return out
}

func TestOwnOutputsDoNotLoop(t *testing.T) {
	t.Parallel()
	t.Run("an agent never bids on its own output", func(t *testing.T) {
		t.Parallel()
		s := stacktest.New(t, `version: "1.0"
agents:
  echo: {command: ["sett-writer", "--type", "Note"], bidding_strategy: exclusive, consumes: ["*"]}
`)
		s.Up("echo")
		wf := s.PostGoal("answer once")
		if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
			t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
		}
		if n := len(stacktest.OfType(s.Artefacts(wf), "Note")); n != 1 {
			t.Fatalf("%d notes, want 1", n)
		}
	})
	t.Run("opting in is stopped by the chain budget", func(t *testing.T) {
		t.Parallel()
		s := stacktest.New(t, `version: "1.0"
orchestrator: {max_chain_depth: 4}
agents:
  echo: {command: ["sett-writer", "--type", "Note"], bidding_strategy: exclusive, consumes: ["*"], bid_on_own_outputs: true}
`)
		s.Up("echo")
		wf := s.PostGoal("echo forever")
		w := s.WaitWorkflow(wf, wait)
		if w.Status != blackboard.WorkflowFailed || !strings.Contains(w.Outcome, "max_chain_depth (4)") {
			t.Fatalf("workflow %s (%s), want failed by max_chain_depth", w.Status, w.Outcome)
		}
		arts := s.Artefacts(wf)
		if n := len(stacktest.OfType(arts, "BudgetExceeded")); n != 1 {
			t.Fatalf("%d BudgetExceeded failures, want 1", n)
		}
		// Notes at depths 1..5 exist; the one at depth 5 exceeds the budget
		// and gets no claim, so nothing deeper is ever produced.
		if n := len(stacktest.OfType(arts, "Note")); n != 5 {
			t.Fatalf("%d notes, want 5", n)
		}
	})
}

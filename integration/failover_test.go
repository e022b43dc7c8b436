package integration

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

// slowPipeline is the three-phase pipeline with a coder that takes a
// second, so that workflows are in flight when the master dies. The bid
// deadline outlasts the failover (≈2 s until the replica is promoted):
// what Sett promises is that an outage shorter than bid_timeout changes
// nothing; with a shorter deadline a claim created just before the kill
// rightly ends as a dead end (its bids could not land in time).
const slowPipeline = `version: "1.0"
orchestrator:
  bid_timeout: 10s
  lease_ttl: 3s
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  reviewer: {command: ["sett-reviewer"], bidding_strategy: review, consumes: ["Plan"]}
  auditor: {command: ["sett-writer", "--type", "AuditNote"], bidding_strategy: claim, consumes: ["Plan"]}
  coder: {command: ["/bin/sh", "-c", "sleep 1; exec sett-writer --type CodeChange"], bidding_strategy: exclusive, consumes: ["Plan"]}
`

// TestSentinelFailoverMidWorkflow kills the Redis master (SIGKILL) while
// workflows run: the sentinel promotes the replica, the daemons follow it,
// and every workflow completes with exactly one artefact of each kind.
func TestSentinelFailoverMidWorkflow(t *testing.T) {
	t.Parallel()
	tp, set := sentinelTopology(t)
	s := tp.stack(t, slowPipeline)
	s.Up("planner", "reviewer", "auditor", "coder")
	const goals = 6
	var wfs []string
	for i := 0; i < goals; i++ {
		wfs = append(wfs, s.PostGoal("failover goal"))
	}
	ctx := context.Background()
	// count is the number of artefacts of every workflow; -1 while Redis
	// cannot answer (during the failover).
	count := func() int {
		n := 0
		for _, wf := range wfs {
			page, err := s.BB.ListArtefacts(ctx, blackboard.PageQuery{WorkflowID: wf, Limit: 100})
			if err != nil {
				return -1
			}
			n += len(page.IDs)
		}
		return n
	}
	// Mid-workflow: some plans written, no code change yet (the coder
	// takes a second).
	s.Eventually(wait, "the first plans", func() bool { return count() > goals })
	oldMaster := set.Master.Addr
	before := count()
	if before >= goals*5 {
		t.Fatalf("every workflow finished before the kill (%d artefacts)", before)
	}
	// Replication is asynchronous: what the replica has not received when
	// the master dies is lost (README: wait_replicas for stricter
	// writes). This test is about following the failover, so the kill
	// comes once the replica has acknowledged everything written so far
	// (WAIT); the workflows are still in flight.
	master := redis.NewClient(&redis.Options{Addr: set.Master.Addr, Password: set.Password})
	acked, err := master.Wait(ctx, 1, 10*time.Second).Result()
	_ = master.Close()
	if err != nil || acked < 1 {
		t.Fatalf("the replica did not acknowledge the writes before the kill: %d replicas, %v", acked, err)
	}
	killed := time.Now()
	if err := set.Master.Kill(); err != nil {
		t.Fatal(err)
	}
	s.Eventually(wait, "the replica promoted", func() bool {
		a, err := set.MasterAddr(ctx)
		return err == nil && a == set.Replica.Addr
	})
	promoted := time.Since(killed)
	// For a failure below: what the promoted replica holds.
	replica := redis.NewClient(&redis.Options{Addr: set.Replica.Addr, Password: set.Password})
	keys, _ := replica.DBSize(ctx).Result()
	role, _ := replica.Do(ctx, "ROLE").Slice()
	_ = replica.Close()
	t.Logf("promoted replica %s: %d keys, role %v", set.Replica.Addr, keys, role)
	s.Eventually(wait, "a workflow progressing after the failover", func() bool { return count() > before })
	progressed := time.Since(killed)
	t.Logf("failover figures: master %s killed with %d/%d artefacts written; replica %s promoted after %s; first workflow progress after %s",
		oldMaster, before, goals*5, set.Replica.Addr, promoted.Round(time.Millisecond), progressed.Round(time.Millisecond))

	for _, wf := range wfs {
		if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
			t.Fatalf("workflow %s: %s (%s), want completed", wf, w.Status, w.Outcome)
		}
		arts := s.Artefacts(wf)
		for typ, want := range map[string]int{"GoalDefined": 1, "Plan": 1, "Review": 1, "AuditNote": 1, "CodeChange": 1} {
			if got := len(stacktest.OfType(arts, typ)); got != want {
				t.Errorf("workflow %s: %d %s artefacts, want %d (nothing lost, nothing doubled)", wf, got, typ, want)
			}
		}
	}
}

package blackboard_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// TestPlannedGrantRespectsTheAgentsCapacity: an agent may hold its
// max_concurrent times its live replicas (at least one) grants. With one
// grant already held, the planned grant of a single expected bid goes to
// the agent's grants stream when a slot is free and waits in its queue
// otherwise; releasing the held grant hands the waiting one over.
func TestPlannedGrantRespectsTheAgentsCapacity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		limit     int
		replicas  int // live replicas (beats within the replica TTL)
		stale     int // replicas whose last beat is older than the TTL
		delivered bool
	}{
		{name: "no limit", limit: 0, replicas: 1, delivered: true},
		{name: "one replica at its limit", limit: 1, replicas: 1, delivered: false},
		{name: "no live replica counts as one", limit: 1, replicas: 0, stale: 2, delivered: false},
		{name: "two live replicas double the limit", limit: 1, replicas: 2, delivered: true},
		{name: "a stale replica does not count", limit: 1, replicas: 1, stale: 1, delivered: false},
		{name: "room below the limit", limit: 2, replicas: 1, delivered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			raw := redistest.Raw(t)
			ctx := t.Context()
			const agent = "worker"
			k := c.Keys()
			if err := c.SetCapacity(ctx, map[string]int{agent: tc.limit}, 10*time.Second, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			now := time.Now().UnixMilli()
			for i := 0; i < tc.replicas; i++ {
				raw.ZAdd(ctx, k.AgentReplicas(agent), redis.Z{Score: float64(now), Member: "live-" + strconv.Itoa(i)})
			}
			for i := 0; i < tc.stale; i++ {
				raw.ZAdd(ctx, k.AgentReplicas(agent), redis.Z{Score: float64(now - 60_000), Member: "stale-" + strconv.Itoa(i)})
			}
			// A grant the agent already holds.
			held := blackboard.NewID()
			raw.ZAdd(ctx, k.AgentRunning(agent), redis.Z{Score: float64(now), Member: held})

			bids := map[string]blackboard.Bid{agent: blackboard.BidExclusive}
			cl := planned(t, c, time.Hour, planFor(0, agent, blackboard.GrantExclusive, bids), agent)
			answer(t, c, []string{agent}, bids)

			got, err := c.GetClaim(ctx, cl.ID)
			if err != nil || got.Status != blackboard.ClaimPendingExclusive {
				t.Fatalf("claim after the bid: %+v (%v), want pending_exclusive", got, err)
			}
			queues, slots, err := c.AgentQueues(ctx, []string{agent})
			if err != nil {
				t.Fatal(err)
			}
			if tc.delivered {
				if g := grantsOf(t, c, agent); len(g) != 1 || g[0].ClaimID != cl.ID {
					t.Errorf("grants = %+v, want the claim's grant delivered", g)
				}
				if len(queues[agent]) != 0 || slots[agent] != 2 {
					t.Errorf("%d waiting, %d slots held; want 0 and 2", len(queues[agent]), slots[agent])
				}
				return
			}
			if g := grantsOf(t, c, agent); len(g) != 0 {
				t.Errorf("grants = %+v, want none while the agent is at its capacity", g)
			}
			if q := queues[agent]; len(q) != 1 || q[0].ClaimID != cl.ID || q[0].WorkflowStartedMs == 0 || slots[agent] != 1 {
				t.Fatalf("waiting %+v, %d slots held; want the claim waiting with its workflow's start, 1 slot", q, slots[agent])
			}
			if err := c.ReleaseGrant(ctx, agent, held); err != nil {
				t.Fatal(err)
			}
			if g := grantsOf(t, c, agent); len(g) != 1 || g[0].ClaimID != cl.ID {
				t.Errorf("grants after the release = %+v, want the waiting grant delivered", g)
			}
			queues, slots, err = c.AgentQueues(ctx, []string{agent})
			if err != nil || len(queues[agent]) != 0 || slots[agent] != 1 {
				t.Errorf("after the release: %d waiting, %d slots held (%v); want 0 and 1", len(queues[agent]), slots[agent], err)
			}
			if score, err := raw.ZScore(ctx, k.Timers(), cl.ID).Result(); err != nil || int64(score) > time.Now().UnixMilli()+30_000 {
				t.Errorf("timer at %v (%v), want the lease check within 30s of the delivery", score, err)
			}
		})
	}
}

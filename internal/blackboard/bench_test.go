package blackboard_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// roundTrips counts what a client sends to Redis: one per command and one
// per pipeline (MULTI/EXEC included), which is what the performance budget counts.
type roundTrips struct{ n atomic.Int64 }

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmds)
	}
}

// benchClient returns a client on the shared server whose round trips are
// counted by the returned hook.
func benchClient(b *testing.B) (*blackboard.Client, *roundTrips) {
	b.Helper()
	srv := redistest.Shared(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: srv.Password})
	b.Cleanup(func() { _ = rdb.Close() })
	hook := &roundTrips{}
	rdb.AddHook(hook)
	c, err := blackboard.New(b.Context(), rdb, blackboard.Options{Instance: redistest.Instance(b)})
	if err != nil {
		b.Fatal(err)
	}
	return c, hook
}

// measure resets the timer and the count, runs op b.N times and reports
// round_trips/op.
func measure(b *testing.B, hook *roundTrips, op func(i int)) {
	b.Helper()
	b.ReportAllocs()
	hook.n.Store(0)
	b.ResetTimer()
	for i := range b.N {
		op(i)
	}
	b.StopTimer()
	b.ReportMetric(float64(hook.n.Load())/float64(b.N), "round_trips/op")
}

func BenchmarkCreateArtefact(b *testing.B) {
	c, hook := benchClient(b)
	g := startWorkflow(b, c)
	arts := make([]*blackboard.Artefact, b.N)
	for i := range arts {
		arts[i] = child(g.ID)
	}
	ctx := b.Context()
	measure(b, hook, func(i int) {
		if err := c.CreateArtefact(ctx, arts[i], blackboard.WriteAuth{}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkTransitionClaim grants pre-created claims (pending_consensus →
// pending_exclusive with a grant token and an inbox message).
func BenchmarkTransitionClaim(b *testing.B) {
	c, hook := benchClient(b)
	g := startWorkflow(b, c)
	claims := make([]*blackboard.Claim, b.N)
	for i := range claims {
		claims[i] = createClaim(b, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "coder"), AddsItem: true})
	}
	ctx := b.Context()
	measure(b, hook, func(i int) {
		cl := claims[i]
		_, err := c.TransitionClaim(ctx, blackboard.Transition{Epoch: 1,
			ClaimID: cl.ID, WorkflowID: g.ID, From: blackboard.ClaimPendingConsensus, Rev: cl.Rev,
			To: blackboard.ClaimPendingExclusive, Set: blackboard.ClaimPatch{GrantedExclusiveAgent: "coder"},
			Grants: map[string]string{"coder": "1"}, ArmTimer: true,
			Inbox: []blackboard.InboxMessage{grantMessage("coder", cl, blackboard.GrantExclusive, "1")},
		})
		if err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkLatestVersion(b *testing.B) {
	c, hook := benchClient(b)
	g := startWorkflow(b, c)
	v1 := create(b, c, child(g.ID))
	v3 := create(b, c, rework(create(b, c, rework(v1))))
	ctx := b.Context()
	measure(b, hook, func(int) {
		a, err := c.LatestVersion(ctx, v1.LogicalID)
		if err != nil || a.ID != v3.ID {
			b.Fatalf("LatestVersion = %v, %v", a, err)
		}
	})
}

// BenchmarkResolveLatest10 is a cub's context read: ten artefacts, each
// resolved to its thread's latest version, in one pipelined round trip.
func BenchmarkResolveLatest10(b *testing.B) {
	c, hook := benchClient(b)
	g := startWorkflow(b, c)
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = create(b, c, child(g.ID)).ID
	}
	ctx := b.Context()
	measure(b, hook, func(int) {
		arts, err := c.ResolveLatest(ctx, ids)
		if err != nil || len(arts) != 10 || arts[9] == nil {
			b.Fatalf("ResolveLatest = %v, %v", arts, err)
		}
	})
}

// BenchmarkCreateGoal writes goals: what `sett forage` and the vault pay
// per goal (goal write), with no daemon running.
func BenchmarkCreateGoal(b *testing.B) {
	c, hook := benchClient(b)
	goals := make([]*blackboard.Artefact, b.N)
	for i := range goals {
		goals[i] = blackboard.NewGoal("bench goal", 0, "user", nil)
	}
	ctx := b.Context()
	measure(b, hook, func(i int) {
		if err := c.CreateArtefact(ctx, goals[i], blackboard.WriteAuth{}); err != nil {
			b.Fatal(err)
		}
	})
}

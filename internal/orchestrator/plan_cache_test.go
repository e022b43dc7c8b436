package orchestrator

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/bidding"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// TestPlanCacheFollowsTheLiveSet: a claim's bid plan is computed once per
// (type, producer role) and live set — the same plan while nobody comes
// or goes, a new one as soon as the directory sees a change.
func TestPlanCacheFollowsTheLiveSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bb := redistest.Client(t)
	agents := map[string]string{"coder-a": "coder", "coder-b": "coder"}
	rules := map[string]bidding.Rules{
		"coder-a": {Role: "coder", Strategy: blackboard.BidExclusive},
		"coder-b": {Role: "coder", Strategy: blackboard.BidExclusive, Consumes: []string{"Plan"}},
	}
	for name, role := range agents {
		if err := bb.RegisterAgent(ctx, blackboard.Registration{Name: name, Role: role, Consumer: "test"}, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	dir := NewAgentDirectory(bb, zerolog.Nop(), agents, time.Hour)
	if err := dir.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	decided, asked := newPlanCache(dir, rules, true), newPlanCache(dir, rules, false)

	p := decided.get("Plan", "planner")
	// Both bid exclusive by their rules: the lowest name's bid is stored,
	// the event names both.
	want := map[string]blackboard.Bid{"coder-a": blackboard.BidExclusive}
	if len(p.plan.Bidders) != 0 || !reflect.DeepEqual(p.bids, want) || p.fields["bids"] != "coder-a=exclusive,coder-b=exclusive" {
		t.Fatalf("decided plan: bidders %v, bids %v, event fields %v; want nobody asked, coder-a's bid stored, both named", p.plan.Bidders, p.bids, p.fields)
	}
	if again := decided.get("Plan", "planner"); again != p {
		t.Fatal("the same type, role and live set computed a new plan")
	}
	if a := asked.get("Plan", "planner"); !reflect.DeepEqual(a.plan.Bidders, []string{"coder-a", "coder-b"}) || len(a.bids) != 0 || a.fields != nil {
		t.Fatalf("asked plan: bidders %v, bids %v, event fields %v; want both asked, nothing recorded", a.plan.Bidders, a.bids, a.fields)
	}
	// coder-b's rules exclude a Review: an ignore, recorded in its own plan.
	if r := decided.get("Review", "planner"); r.bids["coder-b"] != blackboard.BidIgnore || r.bids["coder-a"] != blackboard.BidExclusive {
		t.Fatalf("Review plan bids %v, want coder-a exclusive and coder-b ignore", r.bids)
	}

	// coder-b stops: its heartbeat is gone at the next refresh.
	if err := redistest.Raw(t).Del(ctx, bb.Keys().Heartbeat("coder-b")).Err(); err != nil {
		t.Fatal(err)
	}
	if err := dir.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	p = decided.get("Plan", "planner")
	if !reflect.DeepEqual(p.bids, map[string]blackboard.Bid{"coder-a": blackboard.BidExclusive}) ||
		!reflect.DeepEqual(p.plan.Absent, []string{"coder-b"}) {
		t.Fatalf("after coder-b stopped: bids %v, absent %v; want coder-a's bid alone and coder-b absent", p.bids, p.plan.Absent)
	}
}

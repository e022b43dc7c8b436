package blackboard_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// instanceKeys lists every key of c's instance (SCAN: tests only).
func instanceKeys(tb testing.TB, rdb *redis.Client, c *blackboard.Client) []string {
	tb.Helper()
	var out []string
	iter := rdb.Scan(tb.Context(), 0, c.Keys().Prefix()+"*", 1000).Iterator()
	for iter.Next(tb.Context()) {
		out = append(out, iter.Val())
	}
	if err := iter.Err(); err != nil {
		tb.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestPurgeWorkflowDeletesEverythingOfAFinishedWorkflow(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	rdb := redistest.Raw(t)
	ctx := t.Context()
	k := c.Keys()

	keep := startWorkflow(t, c) // stays running: never touched
	before := instanceKeys(t, rdb, c)

	g := startWorkflow(t, c)
	a := create(t, c, child(g.ID))
	create(t, c, rework(a))
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "coder"), ByArtefact: true})
	if err := c.SubmitBid(ctx, cl.ID, "coder", blackboard.BidExclusive); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, k.WorkflowMemories(g.ID), "coder", "{}").Err(); err != nil {
		t.Fatal(err)
	}

	_, err := c.PurgeWorkflow(ctx, g.ID, 0, false)
	wantErr(t, err, blackboard.ErrRunning)
	if _, err := c.EndWorkflow(ctx, g.ID, blackboard.WorkflowCompleted, "done", 1); err != nil {
		t.Fatal(err)
	}
	_, err = c.PurgeWorkflow(ctx, g.ID, time.Hour, false)
	wantErr(t, err, blackboard.ErrRetained)

	got, err := c.FinishedWorkflows(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{g.ID}) {
		t.Errorf("FinishedWorkflows = %v, want [%s] (not the running %s)", got, g.ID, keep.ID)
	}
	if got, err := c.FinishedWorkflows(ctx, time.Hour, 10); err != nil || len(got) != 0 {
		t.Errorf("FinishedWorkflows(1h) = %v, %v; want none", got, err)
	}

	full := instanceKeys(t, rdb, c)
	n, err := c.PurgeWorkflow(ctx, g.ID, 0, true)
	if err != nil || n < 8 {
		t.Fatalf("dry run = %d, %v; want at least 8 keys", n, err)
	}
	if after := instanceKeys(t, rdb, c); !slices.Equal(after, full) {
		t.Fatalf("dry run changed the keys:\n%v\nwant\n%v", after, full)
	}

	m, err := c.PurgeWorkflow(ctx, g.ID, 0, false)
	if err != nil || m != n {
		t.Fatalf("PurgeWorkflow = %d, %v; want %d keys as the dry run said", m, err, n)
	}
	after := instanceKeys(t, rdb, c)
	for _, key := range after {
		if strings.Contains(key, g.ID) || strings.Contains(key, a.ID) || strings.Contains(key, cl.ID) {
			t.Errorf("key %s of the purged workflow is left", key)
		}
		if !slices.Contains(before, key) && !slices.Contains([]string{k.Events(), k.OrchestratorQueue()}, key) {
			t.Errorf("key %s appeared and was not purged", key)
		}
	}
	for _, idx := range []string{k.ArtefactIndex(), k.ArtefactIDIndex(), k.ClaimIDIndex(), k.WorkflowIndex()} {
		members, err := rdb.ZRange(ctx, idx, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			if m == g.ID || m == a.ID || m == cl.ID {
				t.Errorf("index %s still holds %s", idx, m)
			}
		}
	}
	if _, err := c.GetWorkflow(ctx, keep.ID); err != nil {
		t.Errorf("the running workflow is gone: %v", err)
	}
	_, err = c.PurgeWorkflow(ctx, g.ID, 0, false)
	wantErr(t, err, blackboard.ErrNotFound)
}

func TestTrimEvents(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	rdb := redistest.Raw(t)
	ctx := t.Context()
	stream := c.Keys().Events()
	add := func(id string) {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: id, Values: []string{"event", "x"}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// 1000 entries from 1970, then 1000 from now.
	for i := 1; i <= 1000; i++ {
		add("1-" + strconv.Itoa(i))
	}
	for i := 0; i < 1000; i++ {
		add("*")
	}
	n, err := c.TrimEvents(ctx, 0, time.Hour, true)
	if err != nil || n != 1000 {
		t.Fatalf("dry run by age = %d, %v; want 1000", n, err)
	}
	if l, _ := c.EventsLength(ctx); l != 2000 {
		t.Fatalf("dry run trimmed: length %d", l)
	}
	if _, err := c.TrimEvents(ctx, 0, time.Hour, false); err != nil {
		t.Fatal(err)
	}
	l, _ := c.EventsLength(ctx)
	if l >= 2000 || l < 1000 {
		t.Errorf("length after trim by age = %d, want in [1000, 2000)", l)
	}
	if _, err := c.TrimEvents(ctx, 100, 0, false); err != nil {
		t.Fatal(err)
	}
	// The approximate trim keeps whole macro nodes (100 entries by
	// default), so a little more than 100 may stay.
	if l, _ := c.EventsLength(ctx); l > 300 {
		t.Errorf("length after trim to 100 = %d, want about 100", l)
	}
}

// A stream far past its bound (more than one approximate XTRIM may
// remove: 100 macro nodes) still gets back under it in one pass.
func TestTrimEventsFarPastTheBound(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	rdb := redistest.Raw(t)
	ctx := t.Context()
	stream := c.Keys().Events()
	const entries = 35000
	pipe := rdb.Pipeline()
	for i := 1; i <= entries; i++ {
		// Old entries first (by age), then recent ones.
		id := "*"
		if i <= entries/2 {
			id = "1-" + strconv.Itoa(i)
		}
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: stream, ID: id, Values: []string{"event", "x"}})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	n, err := c.TrimEvents(ctx, 0, time.Hour, false)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := c.EventsLength(ctx)
	if l > entries-entries/2+200 {
		t.Errorf("length after trim by age = %d (%d removed), want about %d", l, n, entries-entries/2)
	}
	if _, err := c.TrimEvents(ctx, 500, 0, false); err != nil {
		t.Fatal(err)
	}
	if l, _ := c.EventsLength(ctx); l > 700 {
		t.Errorf("length after trim to 500 = %d, want about 500", l)
	}
}

func TestReapConsumers(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	rdb := redistest.Raw(t)
	ctx := context.Background()
	if err := c.RegisterAgent(ctx, blackboard.Registration{Name: "coder", Role: "coder", Consumer: "live"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	stream := c.Keys().AgentGrants("coder")
	if err := rdb.XGroupCreateMkStream(ctx, stream, "cub", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XGroupCreateConsumer(ctx, stream, "cub", "idle").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []string{"kind", "grant"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "cub", Consumer: "busy", Streams: []string{stream, ">"}, Count: 1, Block: -1}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, c.Keys().AgentReplicas("coder"), redis.Z{Score: 1, Member: "gone"}).Err(); err != nil {
		t.Fatal(err)
	}

	dry, err := c.ReapConsumers(ctx, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{stream + " idle", c.Keys().AgentReplicas("coder") + " gone"}
	if !slices.Equal(dry, want) {
		t.Errorf("dry run = %q, want %q", dry, want)
	}
	if got, err := c.ReapConsumers(ctx, 0, false); err != nil || !slices.Equal(got, want) {
		t.Errorf("ReapConsumers = %q, %v; want %q", got, err, want)
	}
	consumers, err := rdb.XInfoConsumers(ctx, stream, "cub").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(consumers) != 1 || consumers[0].Name != "busy" {
		t.Errorf("consumers left = %+v, want only busy (it has a pending entry)", consumers)
	}
	if got, err := c.ReapConsumers(ctx, time.Hour, false); err != nil || len(got) != 0 {
		t.Errorf("ReapConsumers(1h) = %q, %v; want nothing", got, err)
	}
}

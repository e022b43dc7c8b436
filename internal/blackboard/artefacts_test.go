package blackboard_test

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// TestCreateArtefactWritesEverything checks that one CreateArtefact leaves
// the hash, the thread entry, the three index entries, the workflow
// counters and the artefact_created event, all stamped with the same
// server time.
func TestCreateArtefactWritesEverything(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	k := c.Keys()
	g := startWorkflow(t, c)

	before, err := c.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := child(g.ID)
	a.Metadata = map[string]string{"attempt": "1"}
	create(t, c, a)
	after, err := c.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// created_at_ms comes from the Redis clock inside the script.
	if a.CreatedAtMs < before || a.CreatedAtMs > after {
		t.Errorf("created_at_ms %d outside the server clock window [%d, %d]", a.CreatedAtMs, before, after)
	}
	got, err := c.GetArtefact(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Errorf("stored artefact:\n got %+v\nwant %+v", got, a)
	}

	score := func(key, member string) float64 {
		t.Helper()
		s, err := raw.ZScore(ctx, key, member).Result()
		if err != nil {
			t.Fatalf("ZSCORE %s %s: %v", key, member, err)
		}
		return s
	}
	ts := float64(a.CreatedAtMs)
	for _, tc := range []struct {
		name  string
		key   string
		score float64
	}{
		{"thread entry scored by version", k.Thread(a.LogicalID), 1},
		{"time index", k.ArtefactIndex(), ts},
		{"workflow index", k.WorkflowArtefactIndex(g.ID), ts},
		{"id index", k.ArtefactIDIndex(), 0},
	} {
		if got := score(tc.key, a.ID); got != tc.score {
			t.Errorf("%s: ZSCORE %s = %v, want %v", tc.name, tc.key, got, tc.score)
		}
	}

	wf, err := c.GetWorkflow(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wf.ArtefactCount != 2 || wf.OpenItems != 2 || wf.Status != blackboard.WorkflowRunning {
		t.Errorf("workflow after a claimable child: count %d open %d status %s, want 2, 2, running",
			wf.ArtefactCount, wf.OpenItems, wf.Status)
	}

	// The event, as XRANGE shows it to an operator.
	msgs, err := raw.XRange(ctx, k.Events(), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1].Values
	want := map[string]any{
		"event": "artefact_created", "ts": strconv.FormatInt(a.CreatedAtMs, 10), "artefact_id": a.ID,
		"logical_id": a.LogicalID, "version": "1", "workflow_id": g.ID, "type": "CodeCommit",
		"structural_type": "Standard", "produced_by_role": "coder", "depth": "1",
	}
	if !reflect.DeepEqual(last, want) {
		t.Errorf("event fields:\n got %v\nwant %v", last, want)
	}
	if n := len(eventsOf(t, c, blackboard.EventArtefactCreated)); n != 2 {
		t.Errorf("%d artefact_created events, want 2 (goal and child)", n)
	}

	// A non-claimable artefact counts but opens no work.
	r := child(g.ID)
	r.StructuralType = blackboard.StructuralReview
	create(t, c, r)
	if wf, err = c.GetWorkflow(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if wf.ArtefactCount != 3 || wf.OpenItems != 2 {
		t.Errorf("workflow after a review: count %d open %d, want 3, 2", wf.ArtefactCount, wf.OpenItems)
	}
}

func TestCreateGoalStartsWorkflow(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := goal()
	g.Priority = 7
	g.Metadata = map[string]string{"priority": "high"} // the person's words: not read
	create(t, c, g)

	wf, err := c.GetWorkflow(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := &blackboard.Workflow{
		ID: g.ID, Goal: g.Payload, Status: blackboard.WorkflowRunning, Priority: 7,
		ArtefactCount: 1, OpenItems: 1, StartedAtMs: g.CreatedAtMs, Types: []string{"GoalDefined"},
	}
	if !reflect.DeepEqual(wf, want) {
		t.Errorf("workflow:\n got %+v\nwant %+v", wf, want)
	}
	ids, err := c.ListWorkflows(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, []string{g.ID}) {
		t.Errorf("ListWorkflows = %v, want [%s]", ids, g.ID)
	}
	started := eventsOf(t, c, blackboard.EventWorkflowStarted)
	if len(started) != 1 || started[0].WorkflowID != g.ID || started[0].Field("priority") != "7" || started[0].TsMs != g.CreatedAtMs {
		t.Errorf("workflow_started events = %+v, want one for %s with priority 7 at %d", started, g.ID, g.CreatedAtMs)
	}
	// Claims inherit the workflow priority.
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true})
	if cl.Priority != 7 {
		t.Errorf("claim priority = %d, want the workflow's 7", cl.Priority)
	}
}

// TestCreateGoalPriorityRange refuses goal priorities that could not be
// read back: the workflow and claim decoders accept 32-bit priorities.
func TestCreateGoalPriorityRange(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	cases := []struct {
		name     string
		priority int
		ok       bool
	}{
		{"max int32", 2147483647, true},
		{"min int32", -2147483648, true},
		{"over int32", 2147483648, false},
		{"under int32", -3000000000, false},
		{"huge (Lua would print 1e+16)", 10000000000000000, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := goal()
			g.Priority = tc.priority
			before := snapshot(t, raw, c)
			err := c.CreateArtefact(t.Context(), g, blackboard.WriteAuth{})
			if !tc.ok {
				wantErr(t, err, blackboard.ErrInvalid)
				assertUnchanged(t, raw, c, before)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wf, err := c.GetWorkflow(t.Context(), g.ID)
			if err != nil {
				t.Fatal(err)
			}
			if wf.Priority != tc.priority {
				t.Errorf("priority = %d, want %d", wf.Priority, tc.priority)
			}
		})
	}
}

// TestCreateArtefactRefusalsWriteNothing checks every refusal of the create
// script, and that a refused write leaves every key of the instance as it
// was.
func TestCreateArtefactRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	redistest.Shared(t) // each case makes its own client; skip the whole table in -short mode
	type setup struct {
		a    *blackboard.Artefact
		auth blackboard.WriteAuth
	}
	cases := []struct {
		name string
		// prepare builds state on a fresh instance and returns the write
		// that must be refused.
		prepare func(t *testing.T, c *blackboard.Client) setup
		want    error
	}{
		{"existing id", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			a := create(t, c, child(g.ID))
			again := *a
			again.CreatedAtMs = 0
			again.Payload = "different"
			return setup{a: &again}
		}, blackboard.ErrExists},
		{"existing goal", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			again := *g
			again.CreatedAtMs = 0
			return setup{a: &again}
		}, blackboard.ErrExists},
		{"priority on an artefact that is not a goal", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			a := child(g.ID)
			a.Priority = 3
			return setup{a: a}
		}, blackboard.ErrInvalid},
		{"duplicate version", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			v1 := create(t, c, child(g.ID))
			create(t, c, rework(v1))
			return setup{a: rework(v1)} // a second v2
		}, blackboard.ErrVersionConflict},
		{"version gap", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			v1 := create(t, c, child(g.ID))
			return setup{a: rework(rework(v1))} // v3 without v2
		}, blackboard.ErrVersionConflict},
		{"version 2 of a thread that does not exist", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			return setup{a: rework(child(g.ID))}
		}, blackboard.ErrVersionConflict},
		{"unknown workflow", func(t *testing.T, c *blackboard.Client) setup {
			startWorkflow(t, c)
			return setup{a: child(blackboard.NewID())}
		}, blackboard.ErrNotFound},
		{"stale grant token", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true,
				Grants: map[string]string{"coder": "2"}})
			a := child(g.ID)
			a.ClaimID, a.ProducedByAgent = cl.ID, "coder"
			return setup{a: a, auth: blackboard.WriteAuth{GrantToken: "1"}}
		}, blackboard.ErrStaleGrant},
		{"grant never issued", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true,
				Grants: map[string]string{"coder": "1"}})
			a := child(g.ID)
			a.ClaimID, a.ProducedByAgent = cl.ID, "tester"
			return setup{a: a, auth: blackboard.WriteAuth{GrantToken: "1"}}
		}, blackboard.ErrStaleGrant},
		{"second output of the same agent", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true,
				Grants: map[string]string{"coder": "1"}})
			auth := blackboard.WriteAuth{GrantToken: "1"}
			first := child(g.ID)
			first.ClaimID, first.ProducedByAgent = cl.ID, "coder"
			create(t, c, first, auth)
			second := child(g.ID)
			second.ClaimID, second.ProducedByAgent = cl.ID, "coder"
			return setup{a: second, auth: auth}
		}, blackboard.ErrExists},
		{"stale leader epoch", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			old := lead(t, c, "orch-a")
			if err := c.Resign(t.Context(), "orch-a"); err != nil {
				t.Fatal(err)
			}
			if now := lead(t, c, "orch-b"); now.Epoch != old.Epoch+1 {
				t.Fatalf("second leader epoch %d, want %d", now.Epoch, old.Epoch+1)
			}
			return setup{a: child(g.ID), auth: blackboard.WriteAuth{Epoch: old.Epoch}}
		}, blackboard.ErrFenced},
		{"grant result without claim id", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			a := child(g.ID)
			a.ProducedByAgent = "coder"
			return setup{a: a, auth: blackboard.WriteAuth{GrantToken: "1"}}
		}, blackboard.ErrInvalid},
		{"invalid artefact", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			a := child(g.ID)
			a.Type = ""
			return setup{a: a}
		}, blackboard.ErrInvalid},
		{"payload over the client limit", func(t *testing.T, c *blackboard.Client) setup {
			g := startWorkflow(t, c)
			a := child(g.ID)
			a.Payload = string(make([]byte, c.MaxPayload()+1))
			return setup{a: a}
		}, blackboard.ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.Client(t)
			raw := redistest.Raw(t)
			s := tc.prepare(t, c)
			before := snapshot(t, raw, c)
			err := c.CreateArtefact(t.Context(), s.a, s.auth)
			wantErr(t, err, tc.want)
			assertUnchanged(t, raw, c, before)
			if s.a.CreatedAtMs != 0 {
				t.Errorf("a refused write set CreatedAtMs to %d", s.a.CreatedAtMs)
			}
		})
	}
}

// TestCreateArtefactGrantResult records a grant result as the agent's
// output of the claim, which TakeLease and GetClaimState then see.
func TestCreateArtefactGrantResult(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g), ByArtefact: true,
		Grants: map[string]string{"coder": "1"}})
	a := child(g.ID)
	a.ClaimID, a.ProducedByAgent = cl.ID, "coder"
	create(t, c, a, blackboard.WriteAuth{GrantToken: "1"})

	st, err := c.GetClaimState(ctx, cl.ID, g.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st.Outputs, map[string]string{"coder": a.ID}) {
		t.Errorf("outputs = %v, want coder → %s", st.Outputs, a.ID)
	}
	ev := eventsOf(t, c, blackboard.EventArtefactCreated)
	if last := ev[len(ev)-1]; last.ClaimID != cl.ID || last.Agent != "coder" || last.ArtefactID != a.ID {
		t.Errorf("artefact_created = %+v, want claim %s agent coder", last, cl.ID)
	}
}

// TestArtefactHashIsReadable looks at an artefact the way an operator does
// with redis-cli HGETALL: plain fields, JSON only for lists and metadata.
func TestArtefactHashIsReadable(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	g := startWorkflow(t, c)
	a := child(g.ID)
	a.Payload = "## Plan\n1. write tests"
	a.Summary = "a plan"
	a.Metadata = map[string]string{"priority": "2", "attempt": "1"}
	create(t, c, a)

	got, err := raw.HGetAll(t.Context(), "sett:"+c.Instance()+":artefact:"+a.ID).Result()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"id": a.ID, "logical_id": a.ID, "version": "1", "structural_type": "Standard",
		"type": "CodeCommit", "payload": "## Plan\n1. write tests", "source_artefacts": `["` + g.ID + `"]`,
		"produced_by_role": "coder", "workflow_id": g.ID, "summary": "a plan", "depth": "1",
		"created_at_ms": strconv.FormatInt(a.CreatedAtMs, 10), "metadata": `{"attempt":"1","priority":"2"}`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("HGETALL:\n got %v\nwant %v", got, want)
	}
}

// TestHashTagKeys writes through a client with the cluster hash tag and
// finds the records under sett:{<instance>}:.
func TestHashTagKeys(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t, func(o *blackboard.Options) { o.HashTag = true })
	raw := redistest.Raw(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	prefix := "sett:{" + c.Instance() + "}:"
	for _, key := range []string{prefix + "artefact:" + g.ID, prefix + "workflow:" + g.ID, prefix + "events", prefix + "thread:" + g.ID} {
		if n, err := raw.Exists(ctx, key).Result(); err != nil || n != 1 {
			t.Errorf("EXISTS %s = %d, %v; want 1", key, n, err)
		}
	}
	if n, _ := raw.Exists(ctx, "sett:"+c.Instance()+":artefact:"+g.ID).Result(); n != 0 {
		t.Error("the artefact also exists under the untagged prefix")
	}
	if _, err := c.GetArtefact(ctx, g.ID); err != nil {
		t.Errorf("read back through the tagged client: %v", err)
	}
}

// TestConcurrentReworksOneWins races two writers for version 2 of the same
// thread, many times: exactly one may win.
func TestConcurrentReworksOneWins(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	for round := range 50 {
		v1 := create(t, c, child(g.ID))
		contenders := []*blackboard.Artefact{rework(v1), rework(v1)}
		errs := make([]error, len(contenders))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, a := range contenders {
			wg.Go(func() {
				<-start
				errs[i] = c.CreateArtefact(ctx, a, blackboard.WriteAuth{})
			})
		}
		close(start)
		wg.Wait()

		won := 0
		for i, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, blackboard.ErrVersionConflict):
				t.Fatalf("round %d, writer %d: %v, want nil or ErrVersionConflict", round, i, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d writers created version 2, want exactly 1", round, won)
		}
		thread, err := c.Thread(ctx, v1.LogicalID)
		if err != nil {
			t.Fatal(err)
		}
		if len(thread) != 2 || thread[1].Version != 2 {
			t.Fatalf("round %d: thread has %d versions, want 2", round, len(thread))
		}
	}
}

func TestGetArtefacts(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	a := create(t, c, child(g.ID))
	missing := blackboard.NewID()

	got, err := c.GetArtefacts(ctx, []string{a.ID, missing, g.ID, a.ID})
	if err != nil {
		t.Fatal(err)
	}
	want := []*blackboard.Artefact{a, nil, g, a}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetArtefacts = %v, want %v", got, want)
	}
	if got, err := c.GetArtefacts(ctx, nil); err != nil || got != nil {
		t.Errorf("GetArtefacts(nil) = %v, %v; want nil, nil", got, err)
	}
	_, err = c.GetArtefacts(ctx, []string{a.ID, "bad"})
	wantErr(t, err, blackboard.ErrInvalid)
	_, err = c.GetArtefact(ctx, missing)
	wantErr(t, err, blackboard.ErrNotFound)
	_, err = c.GetArtefact(ctx, "bad")
	wantErr(t, err, blackboard.ErrInvalid)
}

// TestGetArtefactCorrupt reports a hand-damaged hash as ErrCorrupt naming
// the field, not as a panic or a zero record.
func TestGetArtefactCorrupt(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	g := startWorkflow(t, c)
	if err := raw.HSet(t.Context(), c.Keys().Artefact(g.ID), "version", "two").Err(); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func() error{
		func() error { _, err := c.GetArtefact(t.Context(), g.ID); return err },
		func() error { _, err := c.GetArtefacts(t.Context(), []string{g.ID}); return err },
		func() error { _, err := c.ResolveLatest(t.Context(), []string{g.ID}); return err },
	} {
		err := read()
		wantErr(t, err, blackboard.ErrCorrupt)
	}
}

func TestThreadAndLatestVersion(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	v1 := create(t, c, child(g.ID))
	v2 := create(t, c, rework(v1))
	v3 := create(t, c, rework(v2))

	latest, err := c.LatestVersion(ctx, v1.LogicalID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(latest, v3) {
		t.Errorf("LatestVersion = %+v, want v3 %+v", latest, v3)
	}
	thread, err := c.Thread(ctx, v1.LogicalID)
	if err != nil {
		t.Fatal(err)
	}
	if want := []*blackboard.Artefact{v1, v2, v3}; !reflect.DeepEqual(thread, want) {
		t.Errorf("Thread = %v, want v1, v2, v3", thread)
	}
	unknown := blackboard.NewID()
	_, err = c.LatestVersion(ctx, unknown)
	wantErr(t, err, blackboard.ErrNotFound)
	_, err = c.Thread(ctx, unknown)
	wantErr(t, err, blackboard.ErrNotFound)
	_, err = c.Thread(ctx, "nope")
	wantErr(t, err, blackboard.ErrInvalid)
}

func TestResolveLatest(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	g2 := create(t, c, rework(g)) // the goal's own thread moves on too
	v1 := create(t, c, child(g.ID))
	v2 := create(t, c, rework(v1))
	v3 := create(t, c, rework(v2))
	w1 := create(t, c, child(g.ID))
	w2 := create(t, c, rework(w1))
	head := create(t, c, child(g.ID)) // a v1 that is its thread's head
	missing := blackboard.NewID()

	cases := []struct {
		name string
		ids  []string
		want []*blackboard.Artefact
	}{
		{"heads only (one round trip)", []string{head.ID, v3.ID}, []*blackboard.Artefact{head, v3}},
		{"v1 of a thread with v3", []string{v1.ID}, []*blackboard.Artefact{v3}},
		{"v2 of a thread with v3", []string{v2.ID}, []*blackboard.Artefact{v3}},
		{"latest v2", []string{w2.ID}, []*blackboard.Artefact{w2}},
		{"missing", []string{missing}, []*blackboard.Artefact{nil}},
		{"goal that was reworked", []string{g.ID}, []*blackboard.Artefact{g2}},
		{"mixed and aligned", []string{v1.ID, missing, w1.ID, head.ID, v2.ID, g.ID},
			[]*blackboard.Artefact{v3, nil, w2, head, v3, g2}},
		{"empty", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.ResolveLatest(ctx, tc.ids)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ResolveLatest:\n got %v\nwant %v", got, tc.want)
			}
		})
	}
	_, err := c.ResolveLatest(ctx, []string{v1.ID, "nope"})
	wantErr(t, err, blackboard.ErrInvalid)
}

// TestScriptCacheLoss flushes the server's scripts (a restart without
// persistence, or an operator's SCRIPT FLUSH or FUNCTION FLUSH) and
// writes again, once with the scripts run by EVALSHA and once as
// Functions: the client reloads them on NOSCRIPT / "Function not found",
// for single calls and pipelined ones. It uses a private server so the
// flush cannot disturb tests running in parallel on the shared one.
func TestScriptCacheLoss(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("integration test: needs redis-server (run without -short)")
	}
	for _, tc := range []struct {
		name      string
		functions bool
		flush     func(ctx context.Context, raw *redis.Client) error
	}{
		{"EVALSHA, SCRIPT FLUSH", false, func(ctx context.Context, raw *redis.Client) error { return raw.ScriptFlush(ctx).Err() }},
		{"FCALL, FUNCTION FLUSH", true, func(ctx context.Context, raw *redis.Client) error { return raw.FunctionFlush(ctx).Err() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, err := redistest.NewServer(redistest.ServerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Stop)
			ctx := t.Context()
			raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
			t.Cleanup(func() { _ = raw.Close() })
			if !tc.functions {
				// A user that may not load functions keeps EVALSHA, also
				// when it reloads.
				if err := raw.Do(ctx, "ACL", "SETUSER", "default", "-function|load").Err(); err != nil {
					t.Fatal(err)
				}
			}
			c, err := blackboard.Dial(ctx, srv.URL(), blackboard.Options{Instance: "flush"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			if got := blackboard.UsesFunctions(c); got != tc.functions {
				t.Fatalf("the client uses functions: %v, want %v", got, tc.functions)
			}

			flush := func() {
				t.Helper()
				if err := tc.flush(ctx, raw); err != nil {
					t.Fatal(err)
				}
			}
			flush()
			g := create(t, c, goal())
			flush()
			cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1, Claim: pendingClaim(g, "coder"), ByArtefact: true,
				Grants: map[string]string{"coder": "1"}})
			flush()
			if err := c.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: cl.ID, Agent: "coder", Token: "1", Holder: "cub-1", TTL: time.Minute}); err != nil {
				t.Fatalf("TakeLease after the flush: %v", err)
			}
			flush()
			// Heartbeat sends its script calls in a pipeline.
			lost, err := c.Heartbeat(ctx, blackboard.HeartbeatParams{Agent: "coder", Consumer: "cub-1", TTL: time.Minute, Leases: []blackboard.Lease{{ClaimID: cl.ID, Token: "1"}}, LeaseTTL: time.Minute})
			if err != nil || len(lost) != 0 {
				t.Fatalf("Heartbeat after the flush = %v, %v; want no lost leases", lost, err)
			}
			if _, err := c.GetArtefact(ctx, g.ID); err != nil {
				t.Fatal(err)
			}
			if got := blackboard.UsesFunctions(c); got != tc.functions {
				t.Fatalf("after the reloads the client uses functions: %v, want %v", got, tc.functions)
			}
		})
	}
}

// lead acquires leadership for id and fails unless it now leads.
func lead(tb testing.TB, c *blackboard.Client, id string) blackboard.Leadership {
	tb.Helper()
	l, err := c.AcquireLeadership(tb.Context(), id, time.Minute)
	if err != nil {
		tb.Fatal(err)
	}
	if !l.Leading {
		tb.Fatalf("%s does not lead: %+v", id, l)
	}
	return l
}

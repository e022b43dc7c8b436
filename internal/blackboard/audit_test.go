package blackboard_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

func TestLeaderInfo(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	li, err := c.Leader(ctx)
	if err != nil || li.Holder != "" || li.Epoch != 0 || li.TTL != 0 {
		t.Fatalf("before any leader: %+v, %v", li, err)
	}
	if _, err := c.AcquireLeadership(ctx, "orch-a", time.Minute); err != nil {
		t.Fatal(err)
	}
	li, err = c.Leader(ctx)
	if err != nil || li.Holder != "orch-a" || li.Epoch != 1 || li.TTL <= 0 || li.TTL > time.Minute {
		t.Fatalf("leading: %+v, %v", li, err)
	}
	if err := c.Resign(ctx, "orch-a"); err != nil {
		t.Fatal(err)
	}
	li, err = c.Leader(ctx)
	if err != nil || li.Holder != "" || li.Epoch != 1 || li.TTL != 0 {
		t.Fatalf("after resigning: %+v, %v; want no holder and the last epoch", li, err)
	}
	raw := redistest.Raw(t)
	if err := raw.Set(ctx, c.Keys().Epoch(), "not-a-number", 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = c.Leader(ctx)
	wantErr(t, err, blackboard.ErrCorrupt)
}

func TestInboxLengthsAndClaimOutputs(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	claimID := blackboard.NewID()
	cl := createClaim(t, c, blackboard.NewClaim{Epoch: 1,
		Claim:  &blackboard.Claim{ID: claimID, ArtefactID: g.ID, WorkflowID: g.ID, Status: blackboard.ClaimPendingParallel, GrantedParallelAgents: []string{"a", "b"}},
		Grants: map[string]string{"a": "1", "b": "1"},
		Inbox: []blackboard.InboxMessage{
			{Agent: "a", Kind: blackboard.MessageGrant, ClaimID: claimID, ArtefactID: g.ID, WorkflowID: g.ID, Grant: blackboard.GrantClaim, Token: "1"},
			{Agent: "b", Kind: blackboard.MessageGrant, ClaimID: claimID, ArtefactID: g.ID, WorkflowID: g.ID, Grant: blackboard.GrantClaim, Token: "1"},
		},
	})
	out := child(g.ID)
	out.ClaimID, out.ProducedByAgent = cl.ID, "a"
	create(t, c, out, blackboard.WriteAuth{GrantToken: "1"})

	lens, err := c.InboxLengths(ctx, []string{"a", "b", "nobody"})
	if err != nil {
		t.Fatal(err)
	}
	if lens["a"] != 1 || lens["b"] != 1 || lens["nobody"] != 0 {
		t.Errorf("inbox lengths = %v", lens)
	}
	other := blackboard.NewID()
	outs, err := c.ClaimOutputs(ctx, []string{cl.ID, other})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[0]["a"] != out.ID || len(outs[0]) != 1 || len(outs[1]) != 0 {
		t.Errorf("outputs = %v, want a → %s for the claim and nothing for an unknown claim", outs, out.ID)
	}
	_, err = c.ClaimOutputs(ctx, []string{"nope"})
	wantErr(t, err, blackboard.ErrInvalid)
}

func TestCountWorkflows(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	var running []string
	for i := range 5 {
		g := startWorkflow(t, c)
		switch i {
		case 0:
			if _, err := c.EndWorkflow(ctx, g.ID, blackboard.WorkflowCompleted, "ok", 1); err != nil {
				t.Fatal(err)
			}
		case 1:
			if _, err := c.EndWorkflow(ctx, g.ID, blackboard.WorkflowFailed, "no", 1); err != nil {
				t.Fatal(err)
			}
		default:
			running = append(running, g.ID)
		}
	}
	wc, err := c.CountWorkflows(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if wc.Total != 5 || wc.Examined != 5 || wc.ByStatus[blackboard.WorkflowRunning] != 3 ||
		wc.ByStatus[blackboard.WorkflowCompleted] != 1 || wc.ByStatus[blackboard.WorkflowFailed] != 1 {
		t.Errorf("counts = %+v", wc)
	}
	got := slices.Sorted(slices.Values(wc.Running))
	slices.Sort(running)
	if !slices.Equal(got, running) {
		t.Errorf("running = %v, want %v", got, running)
	}
	if wc, err = c.CountWorkflows(ctx, 2); err != nil || wc.Examined != 2 || wc.Total != 5 {
		t.Errorf("newest 2: %+v, %v", wc, err)
	}
}

// TestScanArtefactsResumesMidPage filters a listing whose scores tie in
// groups (as artefacts created in the same millisecond do) and pages it
// with tiny limits: every kept artefact must come exactly once, newest
// first, whatever the page and limit sizes.
func TestScanArtefactsResumesMidPage(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	var all []indexEntry
	for i := range 30 {
		a := child(g.ID)
		if i%3 == 0 {
			a.Type = "Plan"
		}
		create(t, c, a)
		// Scores in groups of seven, so that ties cross page boundaries.
		score := int64(1_000_000 + i/7)
		if err := raw.ZAdd(ctx, c.Keys().ArtefactIndex(), redis.Z{Score: float64(score), Member: a.ID}).Err(); err != nil {
			t.Fatal(err)
		}
		all = append(all, indexEntry{id: a.ID, score: score})
	}
	if err := raw.ZRem(ctx, c.Keys().ArtefactIndex(), g.ID).Err(); err != nil {
		t.Fatal(err)
	}
	wantAll, _ := newestFirst(all)
	var wantPlans []string
	for _, id := range wantAll {
		a, err := c.GetArtefact(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if a.Type == "Plan" {
			wantPlans = append(wantPlans, id)
		}
	}
	isPlan := func(a *blackboard.Artefact) bool { return a.Type == "Plan" }
	for _, tc := range []struct {
		limit, pageSize int64
		keep            func(*blackboard.Artefact) bool
		want            []string
	}{
		{1, 3, isPlan, wantPlans},
		{2, 4, isPlan, wantPlans},
		{3, 0, isPlan, wantPlans},
		{4, 4, nil, wantAll},
		{7, 5, nil, wantAll},
	} {
		var got []string
		q := blackboard.ScanQuery{PageQuery: blackboard.PageQuery{Limit: tc.limit}, Keep: tc.keep, PageSize: tc.pageSize}
		for calls := 0; ; calls++ {
			res, err := c.ScanArtefacts(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(res.Artefacts)) > tc.limit || res.Truncated {
				t.Fatalf("limit %d: %d artefacts, truncated %v", tc.limit, len(res.Artefacts), res.Truncated)
			}
			for _, a := range res.Artefacts {
				got = append(got, a.ID)
			}
			if res.Next == "" {
				break
			}
			if calls > 40 {
				t.Fatal("the scan never ends")
			}
			q.Cursor = res.Next
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("limit %d page %d: got\n%v\nwant\n%v", tc.limit, tc.pageSize, got, tc.want)
		}
	}
}

func TestScanArtefactsStopsAtItsPageBound(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	for range 10 {
		create(t, c, child(g.ID))
	}
	never := func(*blackboard.Artefact) bool { return false }
	res, err := c.ScanArtefacts(ctx, blackboard.ScanQuery{PageQuery: blackboard.PageQuery{Limit: 5}, Keep: never, PageSize: 2, MaxPages: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.Pages != 3 || res.Examined != 6 || res.Next == "" || len(res.Artefacts) != 0 {
		t.Fatalf("scan = %+v; want truncated after 3 pages of 2 with a cursor", res)
	}
	// Going on from the cursor examines the rest: 11 artefacts in all.
	rest, err := c.ScanArtefacts(ctx, blackboard.ScanQuery{PageQuery: blackboard.PageQuery{Limit: 5, Cursor: res.Next}, Keep: never, PageSize: 2, MaxPages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if rest.Truncated || rest.Next != "" || res.Examined+rest.Examined != 11 {
		t.Errorf("rest = %+v; want the remaining %d artefacts examined to the end", rest, 11-res.Examined)
	}
	_, err = c.ScanArtefacts(ctx, blackboard.ScanQuery{PageQuery: blackboard.PageQuery{Cursor: "bogus"}})
	wantErr(t, err, blackboard.ErrInvalid)
	if !strings.Contains(err.Error(), "bogus") {
		t.Errorf("error %v does not name the cursor", err)
	}
}

func TestShortIDsAreUnique(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	mk := func(id string) string {
		a := child(g.ID)
		a.ID, a.LogicalID = id, id
		create(t, c, a)
		return id
	}
	twinA := mk("abcd1234-5678-4000-8000-000000000001")
	twinB := mk("abcd1234-5679-4000-8000-000000000002")
	loner := mk("f0000000-0000-4000-8000-000000000003")
	got, err := c.ShortIDs(ctx, []string{twinA, twinB, loner, g.ID}, 8)
	if err != nil {
		t.Fatal(err)
	}
	// The twins share "abcd1234-567"; one more character tells them apart.
	if got[twinA] != "abcd1234-5678" || got[twinB] != "abcd1234-5679" {
		t.Errorf("twins = %q, %q; want the shortest distinguishing prefixes", got[twinA], got[twinB])
	}
	if got[loner] != "f0000000" {
		t.Errorf("loner = %q, want its 8-character prefix", got[loner])
	}
	for id, short := range got {
		res, err := c.ResolveID(ctx, blackboard.PrefixArtefact, short)
		if err != nil || res != id {
			t.Errorf("short id %q of %s resolves to %q, %v", short, id, res, err)
		}
	}
}

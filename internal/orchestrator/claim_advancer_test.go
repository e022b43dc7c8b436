package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// fixture is an advancer and creator on a fresh instance whose agents are
// registered (alive) but have no cubs: tests play the cubs by hand.
type fixture struct {
	t        *testing.T
	bb       *blackboard.Client
	cfg      Config
	dir      *AgentDirectory
	advancer *ClaimAdvancer
	creator  *ClaimCreator
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	return newFixtureOn(t, cfg, redistest.Client(t))
}

// newFixtureOn is newFixture on a client of the caller's (one whose
// connections the test can find and kill).
func newFixtureOn(t *testing.T, cfg Config, bb *blackboard.Client) *fixture {
	t.Helper()
	ctx := context.Background()
	for name, role := range cfg.Agents {
		if err := bb.RegisterAgent(ctx, blackboard.Registration{Name: name, Role: role, Consumer: "test"}, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	cfg.applyDefaults()
	log := zerolog.Nop()
	m := NewMetrics(nil)
	epoch := func() int64 { return 1 } // no leader elected: any epoch passes, none is refused
	dir := NewAgentDirectory(bb, log, cfg.Agents, time.Second)
	if err := dir.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	adv := NewClaimAdvancer(AdvancerParams{Client: bb, Config: cfg.Advancer, Claims: cfg.Claims, Directory: dir, Epoch: epoch, Metrics: m, Log: log})
	creator := NewClaimCreator(CreatorParams{Client: bb, Config: cfg.Creator, Claims: cfg.Claims, Directory: dir, Advancer: adv,
		Epoch: epoch, Metrics: m, Log: log})
	return &fixture{t: t, bb: bb, cfg: cfg, dir: dir, advancer: adv, creator: creator}
}

// goal posts a goal and creates its claim the way the event loop would.
func (f *fixture) goal() (goalID, claimID string) {
	f.t.Helper()
	ctx := context.Background()
	g := blackboard.NewGoal("test goal", 0, "user", nil)
	if err := f.bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		f.t.Fatal(err)
	}
	ev := blackboard.Event{Type: blackboard.EventArtefactCreated, ArtefactID: g.ID, WorkflowID: g.ID,
		Fields: map[string]string{"structural_type": "Standard", "type": g.Type, "version": "1", "depth": "0", "produced_by_role": "user"}}
	if err := f.creator.OnArtefact(ctx, ev); err != nil {
		f.t.Fatal(err)
	}
	return g.ID, blackboard.DeriveID("claim", g.ID)
}

func (f *fixture) claim(id string) *blackboard.Claim {
	f.t.Helper()
	cl, err := f.bb.GetClaim(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return cl
}

func (f *fixture) bid(claimID, agent string, b blackboard.Bid) {
	f.t.Helper()
	if err := f.bb.SubmitBid(context.Background(), claimID, agent, b); err != nil {
		f.t.Fatal(err)
	}
	f.advance(claimID)
}

func (f *fixture) advance(claimID string) {
	f.t.Helper()
	if err := f.advancer.Advance(context.Background(), claimID, "", true); err != nil {
		f.t.Fatal(err)
	}
}

// deliver writes agent's result for the claim under token, like a cub.
func (f *fixture) deliver(claimID, agent, token string, structural blackboard.StructuralType, payload string) *blackboard.Artefact {
	f.t.Helper()
	cl := f.claim(claimID)
	id := blackboard.NewID()
	a := &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: structural, Type: "Work",
		Payload: payload, SourceArtefacts: []string{cl.ArtefactID}, ProducedByRole: agent, ProducedByAgent: agent,
		WorkflowID: cl.WorkflowID, ClaimID: claimID, Depth: 1}
	if err := f.bb.CreateArtefact(context.Background(), a, blackboard.WriteAuth{GrantToken: token}); err != nil {
		f.t.Fatal(err)
	}
	f.advance(claimID)
	return a
}

func TestConsensusGrantsPhasesInOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{Claims: ClaimConfig{BidTimeout: time.Hour}, Agents: map[string]string{
		"rev": "rev", "par-b": "par-b", "par-a": "par-a", "ex-z": "ex-z", "ex-y": "ex-y"}})
	_, claimID := f.goal()
	f.bid(claimID, "rev", blackboard.BidReview)
	f.bid(claimID, "par-b", blackboard.BidClaim)
	f.bid(claimID, "par-a", blackboard.BidClaim)
	f.bid(claimID, "ex-z", blackboard.BidExclusive)
	if cl := f.claim(claimID); cl.Status != blackboard.ClaimPendingConsensus {
		t.Fatalf("status %s before every expected agent bid, want pending_consensus", cl.Status)
	}
	f.bid(claimID, "ex-y", blackboard.BidExclusive)
	cl := f.claim(claimID)
	if cl.Status != blackboard.ClaimPendingReview || strings.Join(cl.GrantedReviewAgents, ",") != "rev" {
		t.Fatalf("after consensus: %s %v, want pending_review [rev]", cl.Status, cl.GrantedReviewAgents)
	}
	f.deliver(claimID, "rev", "1", blackboard.StructuralReview, `{"verdict":"approve"}`)
	cl = f.claim(claimID)
	if cl.Status != blackboard.ClaimPendingParallel || strings.Join(cl.GrantedParallelAgents, ",") != "par-a,par-b" {
		t.Fatalf("after approval: %s %v, want pending_parallel [par-a par-b]", cl.Status, cl.GrantedParallelAgents)
	}
	f.deliver(claimID, "par-a", "1", blackboard.StructuralStandard, "a")
	if cl = f.claim(claimID); cl.Status != blackboard.ClaimPendingParallel {
		t.Fatalf("status %s with one parallel result missing, want pending_parallel", cl.Status)
	}
	f.deliver(claimID, "par-b", "1", blackboard.StructuralStandard, "b")
	cl = f.claim(claimID)
	if cl.Status != blackboard.ClaimPendingExclusive || cl.GrantedExclusiveAgent != "ex-y" {
		t.Fatalf("after parallel: %s %q, want pending_exclusive ex-y (lowest name)", cl.Status, cl.GrantedExclusiveAgent)
	}
	f.deliver(claimID, "ex-y", "1", blackboard.StructuralStandard, "done")
	if cl = f.claim(claimID); cl.Status != blackboard.ClaimComplete || cl.CompletionReason != "All phases complete." {
		t.Fatalf("final %s %q, want complete", cl.Status, cl.CompletionReason)
	}
}

func TestAdvanceIsIdempotent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{Claims: ClaimConfig{BidTimeout: time.Hour}, Agents: map[string]string{"ex": "ex"}})
	_, claimID := f.goal()
	f.bid(claimID, "ex", blackboard.BidExclusive)
	before := f.claim(claimID)
	for i := 0; i < 3; i++ {
		f.advance(claimID)
	}
	after := f.claim(claimID)
	if after.Rev != before.Rev || after.Status != before.Status || after.UpdatedAtMs != before.UpdatedAtMs {
		t.Fatalf("repeated Advance changed the claim: %+v -> %+v", before, after)
	}
	// Creating the claim again (a redelivered artefact_created) is a no-op.
	goal, err := f.bb.GetArtefact(context.Background(), before.ArtefactID)
	if err != nil {
		t.Fatal(err)
	}
	ev := blackboard.Event{Type: blackboard.EventArtefactCreated, ArtefactID: goal.ID, WorkflowID: goal.ID,
		Fields: map[string]string{"structural_type": "Standard", "type": goal.Type, "version": "1", "depth": "0"}}
	if err := f.creator.OnArtefact(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	ids, err := f.bb.WorkflowClaims(context.Background(), goal.ID)
	if err != nil || len(ids) != 1 {
		t.Fatalf("claims %v (%v), want exactly one", ids, err)
	}
}

func TestBidDeadlineCountsSilentAgentsAsIgnore(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{Claims: ClaimConfig{BidTimeout: 30 * time.Millisecond}, Agents: map[string]string{"ex": "ex", "silent": "silent"}})
	_, claimID := f.goal()
	if err := f.bb.SubmitBid(context.Background(), claimID, "ex", blackboard.BidExclusive); err != nil {
		t.Fatal(err)
	}
	// Advance before the deadline waits; after it, resolves. Poll the
	// observable status against a deadline (the Redis clock decides).
	deadline := time.Now().Add(10 * time.Second)
	for f.claim(claimID).Status == blackboard.ClaimPendingConsensus {
		if time.Now().After(deadline) {
			t.Fatal("consensus never resolved after the bid deadline")
		}
		f.advance(claimID)
	}
	cl := f.claim(claimID)
	if cl.Status != blackboard.ClaimPendingExclusive || cl.GrantedExclusiveAgent != "ex" {
		t.Fatalf("claim %s %q, want pending_exclusive ex", cl.Status, cl.GrantedExclusiveAgent)
	}
	bids, err := f.bb.GetBids(context.Background(), claimID)
	if err != nil || bids["silent"] != blackboard.BidIgnore {
		t.Fatalf("bids %v (%v), want silent=ignore", bids, err)
	}
	if err := f.bb.SubmitBid(context.Background(), claimID, "silent", blackboard.BidExclusive); !errors.Is(err, blackboard.ErrStaleStatus) {
		t.Fatalf("late bid: %v, want ErrStaleStatus", err)
	}
}

func TestLostLeaseIsRegrantedThenTerminated(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{Claims: ClaimConfig{BidTimeout: time.Hour, LeaseTTL: 20 * time.Millisecond}, Advancer: AdvancerConfig{MaxGrantAttempts: 2},
		Agents: map[string]string{"ex": "ex"}})
	wf, claimID := f.goal()
	f.bid(claimID, "ex", blackboard.BidExclusive)
	// Nobody takes the lease. Once the grant is older than the lease TTL,
	// a lease check re-grants under token 2, then gives up.
	waitStatus := func(pred func(*blackboard.Claim) bool, what string) *blackboard.Claim {
		deadline := time.Now().Add(10 * time.Second)
		for {
			f.advance(claimID)
			if cl := f.claim(claimID); pred(cl) {
				return cl
			}
			if time.Now().After(deadline) {
				t.Fatalf("never reached: %s", what)
			}
		}
	}
	cl := waitStatus(func(c *blackboard.Claim) bool { return c.Attempts == 2 }, "second attempt")
	if cl.Status != blackboard.ClaimPendingExclusive {
		t.Fatalf("status %s on the second attempt", cl.Status)
	}
	// The first token is now stale: a zombie result is refused.
	stale := &blackboard.Artefact{ID: blackboard.NewID(), Version: 1, StructuralType: blackboard.StructuralStandard,
		Type: "Work", ProducedByRole: "ex", ProducedByAgent: "ex", WorkflowID: wf, ClaimID: claimID}
	stale.LogicalID = stale.ID
	if err := f.bb.CreateArtefact(context.Background(), stale, blackboard.WriteAuth{GrantToken: "1"}); !errors.Is(err, blackboard.ErrStaleGrant) {
		t.Fatalf("result under the old token: %v, want ErrStaleGrant", err)
	}
	cl = waitStatus(func(c *blackboard.Claim) bool { return c.Status.Final() }, "termination")
	if cl.Status != blackboard.ClaimTerminated || !strings.Contains(cl.TerminationReason, "after 2 grant attempts") {
		t.Fatalf("claim %s %q, want terminated after 2 attempts", cl.Status, cl.TerminationReason)
	}
	w, err := f.bb.GetWorkflow(context.Background(), wf)
	if err != nil || w.Status != blackboard.WorkflowFailed {
		t.Fatalf("workflow %+v (%v), want failed", w, err)
	}
}

func TestRejectionCreatesOneFeedbackClaim(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{Claims: ClaimConfig{BidTimeout: time.Hour}, Advancer: AdvancerConfig{MaxReviewIterations: 3},
		Agents: map[string]string{"rev1": "rev1", "rev2": "rev2", "author": "author"}})
	ctx := context.Background()
	_, goalClaim := f.goal()
	f.bid(goalClaim, "rev1", blackboard.BidIgnore)
	f.bid(goalClaim, "rev2", blackboard.BidIgnore)
	f.bid(goalClaim, "author", blackboard.BidExclusive)
	work := f.deliver(goalClaim, "author", "1", blackboard.StructuralStandard, "v1")
	ev := blackboard.Event{Type: blackboard.EventArtefactCreated, ArtefactID: work.ID, WorkflowID: work.WorkflowID,
		Fields: map[string]string{"structural_type": "Standard", "type": work.Type, "version": "1", "depth": "1", "produced_by_role": "author"}}
	if err := f.creator.OnArtefact(ctx, ev); err != nil {
		t.Fatal(err)
	}
	workClaim := blackboard.DeriveID("claim", work.ID)
	f.bid(workClaim, "author", blackboard.BidIgnore)
	f.bid(workClaim, "rev1", blackboard.BidReview)
	f.bid(workClaim, "rev2", blackboard.BidReview)
	r1 := f.deliver(workClaim, "rev1", "1", blackboard.StructuralReview, "needs tests")
	r2 := f.deliver(workClaim, "rev2", "1", blackboard.StructuralReview, `{"verdict":"reject"}`)
	cl := f.claim(workClaim)
	if cl.Status != blackboard.ClaimTerminated || cl.FeedbackClaimID == "" {
		t.Fatalf("rejected claim %s, feedback %q", cl.Status, cl.FeedbackClaimID)
	}
	// Advancing again (a duplicate event) creates nothing new.
	f.advance(workClaim)
	ids, err := f.bb.WorkflowClaims(ctx, cl.WorkflowID)
	if err != nil {
		t.Fatal(err)
	}
	var feedback []*blackboard.Claim
	claims, _ := f.bb.GetClaims(ctx, ids)
	for _, c := range claims {
		if c.IsFeedback() {
			feedback = append(feedback, c)
		}
	}
	if len(feedback) != 1 {
		t.Fatalf("%d feedback claims, want 1", len(feedback))
	}
	fb := feedback[0]
	if fb.Status != blackboard.ClaimPendingAssignment || fb.GrantedExclusiveAgent != "author" || fb.Iteration != 1 ||
		strings.Join(fb.AdditionalContextIDs, ",") != r1.ID+","+r2.ID {
		t.Fatalf("feedback claim %+v, want pending_assignment to author with both reviews", fb)
	}
}

func TestConsensusFromSnapshot(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{Claims: ClaimConfig{BidTimeout: time.Hour}, Agents: map[string]string{"ex": "ex", "rev": "rev"}})
	ctx := context.Background()
	wf, claimID := f.goal()
	qc, err := f.bb.QueueConsumer(ctx, "test", "t")
	if err != nil {
		t.Fatal(err)
	}
	answer := func(agent string, bid blackboard.Bid) {
		e := blackboard.InboxEntry{InboxMessage: blackboard.InboxMessage{Agent: agent, ClaimID: claimID, WorkflowID: wf}}
		if err := f.bb.AnswerBidRequest(ctx, e, bid); err != nil {
			t.Fatal(err)
		}
	}
	answer("rev", blackboard.BidReview)
	answer("ex", blackboard.BidExclusive)
	evs, err := qc.Next(ctx, nil, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	var complete *blackboard.Event
	for i := range evs {
		if evs[i].Type == blackboard.EventBidsComplete {
			complete = &evs[i]
		}
	}
	if complete == nil {
		t.Fatalf("no bids_complete in the queue: %+v", evs)
	}
	if _, ok := blackboard.ConsensusSnapshot(*complete); !ok {
		t.Fatal("bids_complete carries no snapshot")
	}
	if err := f.advancer.AdvanceConsensus(ctx, *complete); err != nil {
		t.Fatal(err)
	}
	cl := f.claim(claimID)
	if cl.Status != blackboard.ClaimPendingReview || strings.Join(cl.GrantedReviewAgents, ",") != "rev" {
		t.Fatalf("claim %s %v after the snapshot, want pending_review [rev]", cl.Status, cl.GrantedReviewAgents)
	}
	// The same (now stale) snapshot again changes nothing.
	if err := f.advancer.AdvanceConsensus(ctx, *complete); err != nil {
		t.Fatal(err)
	}
	if again := f.claim(claimID); again.Rev != cl.Rev || again.Status != cl.Status {
		t.Fatalf("a stale snapshot moved the claim: %+v -> %+v", cl, again)
	}
}

// TestLeaseCheckFollowsTheLeaseExpiry: while a grant's lease lives, the
// next lease check is armed for when the lease would expire unrenewed,
// not a whole lease TTL later, so that a cub cut off from Redis loses its
// grant one TTL after its last renewal (and before a sibling replica
// would reclaim the grant's inbox entry, at two TTLs).
func TestLeaseCheckFollowsTheLeaseExpiry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Config{Claims: ClaimConfig{BidTimeout: time.Hour, LeaseTTL: time.Minute}, Advancer: AdvancerConfig{MaxGrantAttempts: 2},
		Agents: map[string]string{"ex": "ex"}})
	_, claimID := f.goal()
	f.bid(claimID, "ex", blackboard.BidExclusive)
	ctx := t.Context()
	// The cub took the lease and renewed it last a while ago: 3 s are left.
	if err := f.bb.TakeLease(ctx, blackboard.TakeLeaseParams{ClaimID: claimID, Agent: "ex", Token: "1", Holder: "cub-1", TTL: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	// The grant is older than the lease TTL, as if a minute had passed.
	if err := redistest.Raw(t).HSet(ctx, f.bb.Keys().Claim(claimID), "updated_at_ms", 1).Err(); err != nil {
		t.Fatal(err)
	}
	var armed []time.Duration
	f.advancer.TimerArmedFunc = func(d time.Duration) { armed = append(armed, d) }
	f.advance(claimID)
	if len(armed) != 1 {
		t.Fatalf("timers armed: %v, want one lease check", armed)
	}
	if armed[0] <= leaseMargin || armed[0] > 3*time.Second+leaseMargin {
		t.Errorf("next lease check in %v, want when the lease expires (at most 3s + %v)", armed[0], leaseMargin)
	}
	if cl := f.claim(claimID); cl.Attempts > 1 {
		t.Errorf("a live lease was re-granted (attempts %d)", cl.Attempts)
	}
}

package blackboard_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

func TestLeadership(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	acquire := func(id string) blackboard.Leadership {
		t.Helper()
		l, err := c.AcquireLeadership(ctx, id, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	if got, want := acquire("orch-a"), (blackboard.Leadership{Leading: true, Epoch: 1, Acquired: true}); got != want {
		t.Fatalf("first acquisition = %+v, want %+v", got, want)
	}
	if got, want := acquire("orch-b"), (blackboard.Leadership{Holder: "orch-a"}); got != want {
		t.Errorf("second candidate = %+v, want %+v", got, want)
	}
	if got, want := acquire("orch-a"), (blackboard.Leadership{Leading: true, Epoch: 1}); got != want {
		t.Errorf("renewal = %+v, want %+v (same epoch, not acquired)", got, want)
	}
	// Resigning someone else's lease does nothing.
	if err := c.Resign(ctx, "orch-b"); err != nil {
		t.Fatal(err)
	}
	if got := acquire("orch-b"); got.Leading {
		t.Fatalf("orch-b leads after resigning a lease it never held: %+v", got)
	}
	if err := c.Resign(ctx, "orch-a"); err != nil {
		t.Fatal(err)
	}
	if got, want := acquire("orch-b"), (blackboard.Leadership{Leading: true, Epoch: 2, Acquired: true}); got != want {
		t.Fatalf("after resignation = %+v, want %+v", got, want)
	}
	if v, err := raw.Get(ctx, c.Keys().Leader()).Result(); err != nil || v != "orch-b" {
		t.Errorf("leader key = %q, %v", v, err)
	}

	// The old leader's writes are fenced, the new one's go through.
	g := startWorkflow(t, c)
	err := c.CreateArtefact(ctx, child(g.ID), blackboard.WriteAuth{Epoch: 1})
	wantErr(t, err, blackboard.ErrFenced)
	_, err = c.EndWorkflow(ctx, g.ID, blackboard.WorkflowCancelled, "stale", 1)
	wantErr(t, err, blackboard.ErrFenced)
	_, err = c.PopTimers(ctx, 1, 10, time.Minute)
	wantErr(t, err, blackboard.ErrFenced)
	create(t, c, child(g.ID), blackboard.WriteAuth{Epoch: 2})
	if ended, err := c.EndWorkflow(ctx, g.ID, blackboard.WorkflowCancelled, "current", 2); err != nil || !ended {
		t.Errorf("EndWorkflow with the current epoch = %v, %v", ended, err)
	}

	// A lease that expired (deleted here) is taken with a new epoch.
	if err := raw.Del(ctx, c.Keys().Leader()).Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := acquire("orch-a"), (blackboard.Leadership{Leading: true, Epoch: 3, Acquired: true}); got != want {
		t.Errorf("after expiry = %+v, want %+v", got, want)
	}
}

// TestFencingWithManualEpoch sets the epoch key by hand, as a newer leader
// on another host would have.
func TestFencingWithManualEpoch(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	g := startWorkflow(t, c)
	if err := raw.Set(t.Context(), c.Keys().Epoch(), "7", 0).Err(); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, raw, c)
	_, err := c.CreateClaim(t.Context(), blackboard.NewClaim{Claim: pendingClaim(g), ByArtefact: true, Epoch: 6})
	wantErr(t, err, blackboard.ErrFenced)
	assertUnchanged(t, raw, c, before)
	// Fencing is not opt-in: an orchestrator write without an epoch is
	// refused, whatever the stored one.
	for _, epoch := range []int64{0, blackboard.OperatorEpoch} {
		_, err = c.CreateClaim(t.Context(), blackboard.NewClaim{Claim: pendingClaim(g), ByArtefact: true, Epoch: epoch})
		wantErr(t, err, blackboard.ErrNoEpoch)
	}
	assertUnchanged(t, raw, c, before)
	createClaim(t, c, blackboard.NewClaim{Claim: pendingClaim(g), ByArtefact: true, Epoch: 7})
}

// TestOrchestratorScriptsRequireTheEpoch: every orchestrator script
// refuses a missing epoch and a stale one, and changes nothing; only a
// workflow end accepts the operator's epoch (sett cancel).
func TestOrchestratorScriptsRequireTheEpoch(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	cl := createClaim(t, c, blackboard.NewClaim{Claim: pendingClaim(g, "a"), ByArtefact: true, BidTimeout: time.Hour, Epoch: 1})
	l := lead(t, c, "orch-a") // epoch 1
	if err := c.Resign(ctx, "orch-a"); err != nil {
		t.Fatal(err)
	}
	l2 := lead(t, c, "orch-b") // epoch 2
	calls := map[string]func(epoch int64) error{
		"create_claim": func(e int64) error {
			_, err := c.CreateClaim(ctx, blackboard.NewClaim{Claim: pendingClaim(g), Epoch: e})
			return err
		},
		"transition_claim": func(e int64) error {
			_, err := c.TransitionClaim(ctx, blackboard.Transition{ClaimID: cl.ID, WorkflowID: g.ID, From: cl.Status, Rev: -1,
				To: blackboard.ClaimTerminated, Set: blackboard.ClaimPatch{TerminationReason: "x"}, Epoch: e})
			return err
		},
		"end_workflow": func(e int64) error {
			_, err := c.EndWorkflow(ctx, g.ID, blackboard.WorkflowFailed, "x", e)
			return err
		},
		"pop_timers": func(e int64) error {
			_, err := c.PopTimers(ctx, e, 10, time.Minute)
			return err
		},
		"ack_timer": func(e int64) error {
			_, err := c.AckTimer(ctx, e, cl.ID, 1)
			return err
		},
		"write_shared_memory": func(e int64) error {
			return c.WriteSharedMemory(ctx, blackboard.WriteSharedMemoryParams{WorkflowID: g.ID, ClaimID: cl.ID, Doc: "{}", Epoch: e})
		},
	}
	for name, call := range calls {
		before := snapshot(t, raw, c)
		wantErr(t, call(0), blackboard.ErrNoEpoch)
		wantErr(t, call(l.Epoch), blackboard.ErrFenced)
		if name != "end_workflow" {
			wantErr(t, call(blackboard.OperatorEpoch), blackboard.ErrNoEpoch)
		}
		assertUnchanged(t, raw, c, before)
	}
	if ended, err := c.EndWorkflow(ctx, g.ID, blackboard.WorkflowCancelled, "sett cancel", blackboard.OperatorEpoch); err != nil || !ended {
		t.Errorf("an operator's cancel = %v, %v; want the workflow ended", ended, err)
	}
	if _, err := c.PopTimers(ctx, l2.Epoch, 10, time.Minute); err != nil {
		t.Errorf("the current leader's pop: %v", err)
	}
}

// TestTimerSurvivesACrashBetweenPopAndEffect: a popped timer stays in
// Redis, hidden, until its effect is acknowledged; a leader that dies in
// between leaves it to fire again after the visibility timeout.
func TestTimerSurvivesACrashBetweenPopAndEffect(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	now, err := c.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	claim := blackboard.NewID()
	if err := c.ArmTimer(ctx, claim, now-1000); err != nil {
		t.Fatal(err)
	}
	l := lead(t, c, "orch-a")
	const visibility = 100 * time.Millisecond
	first, err := c.PopTimers(ctx, l.Epoch, 10, visibility)
	if err != nil || !slices.Equal(first.ClaimIDs, []string{claim}) {
		t.Fatalf("pop = %+v, %v; want the due timer", first, err)
	}
	if again, err := c.PopTimers(ctx, l.Epoch, 10, visibility); err != nil || len(again.ClaimIDs) != 0 {
		t.Fatalf("second pop at once = %+v, %v; want the timer hidden", again, err)
	}
	// orch-a dies here, before the effect; orch-b takes over.
	if err := c.Resign(ctx, "orch-a"); err != nil {
		t.Fatal(err)
	}
	l2 := lead(t, c, "orch-b")
	if _, err := c.AckTimer(ctx, l.Epoch, claim, first.VisibleAgainMs); !errors.Is(err, blackboard.ErrFenced) {
		t.Fatalf("the dead leader's ack = %v, want ErrFenced", err)
	}
	var back blackboard.DueTimers
	deadline := time.Now().Add(10 * time.Second)
	for len(back.ClaimIDs) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the timer never fired again")
		}
		if back, err = c.PopTimers(ctx, l2.Epoch, 10, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(back.ClaimIDs, []string{claim}) {
		t.Fatalf("fired again = %v, want [%s]", back.ClaimIDs, claim)
	}
	// A re-armed timer survives the ack of its older firing...
	if err := c.ArmTimer(ctx, claim, now+time.Hour.Milliseconds()); err != nil {
		t.Fatal(err)
	}
	if removed, err := c.AckTimer(ctx, l2.Epoch, claim, back.VisibleAgainMs); err != nil || removed {
		t.Fatalf("ack of a re-armed timer = %v, %v; want kept", removed, err)
	}
	// ...and an acknowledged one is gone.
	back, err = c.PopTimers(ctx, l2.Epoch, 10, time.Minute)
	if err != nil || back.NextDueMs != now+time.Hour.Milliseconds() {
		t.Fatalf("next due = %+v, %v", back, err)
	}
	if err := c.ArmTimer(ctx, claim, now-1); err != nil {
		t.Fatal(err)
	}
	back, err = c.PopTimers(ctx, l2.Epoch, 10, time.Minute)
	if err != nil || len(back.ClaimIDs) != 1 {
		t.Fatalf("pop = %+v, %v", back, err)
	}
	if removed, err := c.AckTimer(ctx, l2.Epoch, claim, back.VisibleAgainMs); err != nil || !removed {
		t.Fatalf("ack = %v, %v; want removed", removed, err)
	}
	if n, _ := redistest.Raw(t).ZCard(ctx, c.Keys().Timers()).Result(); n != 0 {
		t.Errorf("%d timers left after the ack, want 0", n)
	}
}

func TestPopTimers(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	now, err := c.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	past1, past2, future := blackboard.NewID(), blackboard.NewID(), blackboard.NewID()
	futureAt := now + time.Hour.Milliseconds()
	for id, at := range map[string]int64{past1: now - 2000, past2: now - 1000, future: futureAt} {
		if err := c.ArmTimer(ctx, id, at); err != nil {
			t.Fatal(err)
		}
	}
	l := lead(t, c, "orch-a")

	got, err := c.PopTimers(ctx, l.Epoch, 1, time.Hour) // the limit applies, oldest first
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.ClaimIDs, []string{past1}) || got.NowMs < now || got.NextDueMs != now-1000 {
		t.Errorf("first pop = %+v, want [%s] with next due %d", got, past1, now-1000)
	}
	got, err = c.PopTimers(ctx, l.Epoch, 100, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.ClaimIDs, []string{past2}) || got.NextDueMs != futureAt {
		t.Errorf("second pop = %+v, want [%s] with next due %d", got, past2, futureAt)
	}
	// Popped timers stay, hidden for the visibility timeout, until acked.
	if removed, err := c.AckTimer(ctx, l.Epoch, past2, got.VisibleAgainMs); err != nil || !removed {
		t.Errorf("ack = %v, %v; want removed", removed, err)
	}
	left, err := raw.ZRange(ctx, c.Keys().Timers(), 0, -1).Result()
	slices.Sort(left)
	want := []string{past1, future}
	slices.Sort(want)
	if err != nil || !slices.Equal(left, want) {
		t.Errorf("timers left = %v, %v; want the unacked first one and the future one", left, err)
	}
	if err := raw.ZRem(ctx, c.Keys().Timers(), past1).Err(); err != nil {
		t.Fatal(err)
	}
	got, err = c.PopTimers(ctx, l.Epoch, 100, time.Hour)
	if err != nil || len(got.ClaimIDs) != 0 || got.NextDueMs != futureAt {
		t.Errorf("pop with nothing due = %+v, %v", got, err)
	}
	if err := raw.Del(ctx, c.Keys().Timers()).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err = c.PopTimers(ctx, l.Epoch, 100, time.Hour); err != nil || got.NextDueMs != -1 {
		t.Errorf("pop with no timers = %+v, %v; want next due -1", got, err)
	}

	// A stale epoch pops nothing.
	if err := c.ArmTimer(ctx, past1, now-5000); err != nil {
		t.Fatal(err)
	}
	if err := raw.Set(ctx, c.Keys().Epoch(), l.Epoch+1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = c.PopTimers(ctx, l.Epoch, 100, time.Hour)
	wantErr(t, err, blackboard.ErrFenced)
	if n, _ := raw.ZCard(ctx, c.Keys().Timers()).Result(); n != 1 {
		t.Error("a fenced pop removed a timer")
	}
}

// TestLeadershipTTLMustBePositive refuses a zero TTL, which the script
// would treat as a resignation and report as leading with epoch 0 — an
// epoch that is never fenced.
func TestLeadershipTTLMustBePositive(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	for _, ttl := range []time.Duration{0, -time.Second, 500 * time.Microsecond} {
		l, err := c.AcquireLeadership(ctx, "orch-a", ttl)
		wantErr(t, err, blackboard.ErrInvalid)
		if l.Leading {
			t.Errorf("ttl %v: reported leading: %+v", ttl, l)
		}
	}
	if l := lead(t, c, "orch-a"); l.Epoch != 1 {
		t.Errorf("first real acquisition got epoch %d, want 1", l.Epoch)
	}
}

func TestReclaimLeadershipFromAnEarlierBoot(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	ctx := t.Context()
	mustLead := func(l blackboard.Leadership, err error) blackboard.Leadership {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	first := mustLead(c.AcquireLeadership(ctx, "host/0#boot1", time.Minute))
	if !first.Leading || first.Epoch != 1 {
		t.Fatalf("first boot = %+v", first)
	}
	// A rival with another identity waits, reclaim or not.
	if got := mustLead(c.ReclaimLeadership(ctx, "host/1#boot9", "host/1", time.Minute)); got.Leading || got.Holder != "host/0#boot1" {
		t.Fatalf("rival reclaim = %+v, want held by host/0#boot1", got)
	}
	// An identity that is a prefix of the holder's is another identity.
	if got := mustLead(c.ReclaimLeadership(ctx, "host#boot9", "host", time.Minute)); got.Leading {
		t.Fatalf("identity host reclaimed host/0's lease: %+v", got)
	}
	// A plain acquisition by the next boot still waits for the TTL.
	if got := mustLead(c.AcquireLeadership(ctx, "host/0#boot2", time.Minute)); got.Leading {
		t.Fatalf("plain acquisition by the next boot = %+v, want held", got)
	}
	// The next boot of the same identity takes over at once, with a new
	// epoch that fences the earlier boot.
	second := mustLead(c.ReclaimLeadership(ctx, "host/0#boot2", "host/0", time.Minute))
	if want := (blackboard.Leadership{Leading: true, Epoch: 2, Acquired: true, Reclaimed: true}); second != want {
		t.Fatalf("reclaim = %+v, want %+v", second, want)
	}
	if got := mustLead(c.AcquireLeadership(ctx, "host/0#boot1", time.Minute)); got.Leading || got.Holder != "host/0#boot2" {
		t.Fatalf("earlier boot renewing after the reclaim = %+v, want held by host/0#boot2", got)
	}
	g := startWorkflow(t, c)
	wantErr(t, c.CreateArtefact(ctx, child(g.ID), blackboard.WriteAuth{Epoch: 1}), blackboard.ErrFenced)
	// Reclaiming a lease one already holds renews it.
	if got := mustLead(c.ReclaimLeadership(ctx, "host/0#boot2", "host/0", time.Minute)); got != (blackboard.Leadership{Leading: true, Epoch: 2}) {
		t.Fatalf("reclaim by the holder = %+v, want a renewal", got)
	}
	for _, bad := range [][2]string{{"host/0", "host/0"}, {"host/0#", "host/0"}, {"x#b", ""}, {"other#b", "host/0"}} {
		if _, err := c.ReclaimLeadership(ctx, bad[0], bad[1], time.Minute); !errors.Is(err, blackboard.ErrInvalid) {
			t.Errorf("ReclaimLeadership(%q, %q) = %v, want ErrInvalid", bad[0], bad[1], err)
		}
	}
}

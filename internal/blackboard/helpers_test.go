package blackboard_test

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// The tests live in blackboard_test (not blackboard) because redistest
// imports blackboard: an internal test package importing it would be an
// import cycle. Everything they need is exported.

// TestMain stops the shared redis-server when the tests are done. The
// runnable examples of the client API are in pkg/blackboard.
func TestMain(m *testing.M) { redistest.Main(m) }

// waitFor is how long a test waits for something it polls or receives.
// It is a deadline, never a duration anything is asserted against.
const waitFor = 10 * time.Second

// goal returns a valid goal artefact: version 1 of its own thread and the
// root of its own workflow.
func goal() *blackboard.Artefact {
	id := blackboard.NewID()
	return &blackboard.Artefact{
		ID: id, LogicalID: id, Version: 1, WorkflowID: id,
		StructuralType: blackboard.StructuralStandard, Type: "GoalDefined",
		Payload: "build a calculator", ProducedByRole: "user",
	}
}

// child returns a valid version 1 artefact of workflow wf.
func child(wf string) *blackboard.Artefact {
	id := blackboard.NewID()
	return &blackboard.Artefact{
		ID: id, LogicalID: id, Version: 1, WorkflowID: wf,
		StructuralType: blackboard.StructuralStandard, Type: "CodeCommit",
		Payload: "0f3a9c1", ProducedByRole: "coder", Depth: 1,
		SourceArtefacts: []string{wf},
	}
}

// rework returns the next version of prev's thread.
func rework(prev *blackboard.Artefact) *blackboard.Artefact {
	next := *prev
	next.ID = blackboard.NewID()
	next.Version = prev.Version + 1
	next.SourceArtefacts = []string{prev.ID}
	next.CreatedAtMs = 0
	next.Payload = prev.Payload + "+"
	return &next
}

// create writes a and fails the test on error.
func create(tb testing.TB, c *blackboard.Client, a *blackboard.Artefact, auth ...blackboard.WriteAuth) *blackboard.Artefact {
	tb.Helper()
	var wa blackboard.WriteAuth
	if len(auth) > 0 {
		wa = auth[0]
	}
	if err := c.CreateArtefact(tb.Context(), a, wa); err != nil {
		tb.Fatalf("create artefact %s: %v", a.ID, err)
	}
	return a
}

// startWorkflow creates a goal and returns it; its ID is the workflow id.
func startWorkflow(tb testing.TB, c *blackboard.Client) *blackboard.Artefact {
	tb.Helper()
	return create(tb, c, goal())
}

// pendingClaim returns a pending_consensus claim on a that expects bids
// from bidders.
func pendingClaim(a *blackboard.Artefact, bidders ...string) *blackboard.Claim {
	return &blackboard.Claim{
		ID: blackboard.NewID(), ArtefactID: a.ID, WorkflowID: a.WorkflowID,
		Status: blackboard.ClaimPendingConsensus, ExpectedBidders: bidders,
	}
}

// createClaim creates nc and fails the test unless a new claim was made.
func createClaim(tb testing.TB, c *blackboard.Client, nc blackboard.NewClaim) *blackboard.Claim {
	tb.Helper()
	r, err := c.CreateClaim(tb.Context(), nc)
	id, created := r.ID, r.Created
	if err != nil {
		tb.Fatalf("create claim %s: %v", nc.Claim.ID, err)
	}
	if !created || id != nc.Claim.ID {
		tb.Fatalf("create claim %s: got id %s created=%v, want a new claim", nc.Claim.ID, id, created)
	}
	cl, err := c.GetClaim(tb.Context(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return cl
}

// allEvents reads the whole event stream.
func allEvents(tb testing.TB, c *blackboard.Client) []blackboard.Event {
	tb.Helper()
	evs, err := c.RangeEvents(tb.Context(), "-", "+", 0)
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

// eventsOf returns the events of one type, oldest first.
func eventsOf(tb testing.TB, c *blackboard.Client, typ blackboard.EventType) []blackboard.Event {
	tb.Helper()
	var out []blackboard.Event
	for _, e := range allEvents(tb, c) {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// snapshot captures every key of c's instance with its serialized value
// (DUMP), so a test can prove that a refused write changed nothing. SCAN is
// fine here: this is test code, not a production path.
func snapshot(tb testing.TB, raw *redis.Client, c *blackboard.Client) map[string]string {
	tb.Helper()
	ctx := tb.Context()
	out := map[string]string{}
	iter := raw.Scan(ctx, 0, c.Keys().Prefix()+"*", 1000).Iterator()
	for iter.Next(ctx) {
		v, err := raw.Dump(ctx, iter.Val()).Result()
		if err != nil {
			tb.Fatalf("dump %s: %v", iter.Val(), err)
		}
		out[iter.Val()] = v
	}
	if err := iter.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// assertUnchanged fails when any key of the instance differs from before.
func assertUnchanged(tb testing.TB, raw *redis.Client, c *blackboard.Client, before map[string]string) {
	tb.Helper()
	after := snapshot(tb, raw, c)
	if maps.Equal(before, after) {
		return
	}
	for k, v := range after {
		if old, ok := before[k]; !ok {
			tb.Errorf("refused write created key %s", k)
		} else if old != v {
			tb.Errorf("refused write changed key %s", k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			tb.Errorf("refused write deleted key %s", k)
		}
	}
}

// wantErr fails unless err matches want with errors.Is.
func wantErr(tb testing.TB, err, want error) {
	tb.Helper()
	if !errors.Is(err, want) {
		tb.Fatalf("got error %v, want %v", err, want)
	}
}

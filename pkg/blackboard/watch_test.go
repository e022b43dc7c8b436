package blackboard

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// waitFor bounds every wait of these tests: a deadline, never a duration
// anything is asserted against.
const waitFor = 10 * time.Second

// testClient is a facade on a fresh instance of the shared redis-server
// whose watch looks at the workflow after quietFor without events.
func testClient(t *testing.T, quietFor time.Duration) *Client {
	t.Helper()
	c := newClient(redistest.Client(t))
	c.watchBlock = quietFor
	return c
}

// watch collects what WatchWorkflow yields, failing the test on an error.
func watch(t *testing.T, c *Client, workflowID, after string) []EventType {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	var got []EventType
	for ev, err := range c.WatchWorkflow(ctx, workflowID, after) {
		if err != nil {
			t.Fatalf("watch %s: %v (after %v)", workflowID, err, got)
		}
		got = append(got, ev.Type)
	}
	return got
}

func TestWatchWorkflowEndsWithItsCompletion(t *testing.T) {
	c := testClient(t, time.Hour) // no end but the event
	ctx := t.Context()
	other, err := c.PostGoal(ctx, Goal{Text: "another goal"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.PostGoal(ctx, Goal{Text: "the watched goal"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CancelWorkflow(ctx, g.ID, "", ""); err != nil {
		t.Fatal(err)
	}
	// Events after the completion are not the watch's.
	if _, err := c.CancelWorkflow(ctx, other.ID, "", ""); err != nil {
		t.Fatal(err)
	}
	got := watch(t, c, g.ID, "0")
	want := []EventType{EventWorkflowStarted, EventArtefactCreated, EventWorkflowCompleted}
	if !slices.Equal(got, want) {
		t.Errorf("watched %v, want %v (the other workflow's left out)", got, want)
	}
}

func TestWatchWorkflowEndsWhenTheCompletionWasTrimmed(t *testing.T) {
	c := testClient(t, 20*time.Millisecond)
	ctx := t.Context()
	g, err := c.PostGoal(ctx, Goal{Text: "ended long ago"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CancelWorkflow(ctx, g.ID, "", ""); err != nil {
		t.Fatal(err)
	}
	// The stream loses everything (trimmed by events.max_length): only
	// the workflow's status says it ended.
	if err := redistest.Raw(t).Del(ctx, c.bb.Keys().Events()).Err(); err != nil {
		t.Fatal(err)
	}
	if got := watch(t, c, g.ID, "0"); len(got) != 0 {
		t.Errorf("watched %v from an empty stream", got)
	}
}

func TestWatchWorkflowStopsWhenTheLoopBreaks(t *testing.T) {
	c := testClient(t, time.Hour)
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	g, err := c.PostGoal(ctx, Goal{Text: "still running"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ev, err := range c.WatchWorkflow(ctx, g.ID, "0") {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ev.Type != EventWorkflowStarted {
			t.Errorf("first event %s, want %s", ev.Type, EventWorkflowStarted)
		}
		break // a running workflow: the watch must not go on
	}
	if n != 1 {
		t.Errorf("%d events before the break, want 1", n)
	}
}

func TestWatchWorkflowOfNoWorkflow(t *testing.T) {
	c := testClient(t, time.Hour)
	for _, err := range c.WatchWorkflow(t.Context(), blackboard.NewID(), "0") {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("watching no workflow: %v, want ErrNotFound", err)
		}
	}
}

func TestWorkflowAndFinalArtefacts(t *testing.T) {
	c := testClient(t, time.Hour)
	ctx := t.Context()
	g, err := c.PostGoal(ctx, Goal{Text: "build it"})
	if err != nil {
		t.Fatal(err)
	}
	finals, err := c.FinalArtefacts(ctx, g.ID)
	if err != nil || len(finals) != 1 || finals[0].ID != g.ID {
		t.Fatalf("final artefacts of a bare goal: %v, %v; want the goal", finals, err)
	}
	var ids []string
	src := g.ID
	for _, typ := range []string{"Plan", "CodeCommit"} { // each builds on the one before
		id := blackboard.NewID()
		a := &Artefact{ID: id, LogicalID: id, Version: 1, WorkflowID: g.ID, Depth: 1, StructuralType: StructuralStandard,
			Type: typ, Payload: typ, ProducedByRole: "coder", SourceArtefacts: []string{src}}
		if err := c.bb.CreateArtefact(ctx, a, blackboard.WriteAuth{}); err != nil {
			t.Fatal(err)
		}
		ids, src = append(ids, id), id
	}
	all, err := c.WorkflowArtefacts(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, a := range all {
		got = append(got, a.ID)
		if i > 0 && (all[i-1].CreatedAtMs > a.CreatedAtMs || all[i-1].CreatedAtMs == a.CreatedAtMs && all[i-1].ID > a.ID) {
			t.Errorf("workflow artefact %d (%d, %s) comes after (%d, %s): want oldest first, then by id",
				i, a.CreatedAtMs, a.ID, all[i-1].CreatedAtMs, all[i-1].ID)
		}
	}
	slices.Sort(got)
	want := append([]string{g.ID}, ids...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("workflow artefacts %v, want %v", got, want)
	}
	finals, err = c.FinalArtefacts(ctx, g.ID)
	if err != nil || len(finals) != 1 || finals[0].ID != ids[1] {
		t.Errorf("final artefacts %v, %v; want only the commit %s", finals, err, ids[1])
	}
}

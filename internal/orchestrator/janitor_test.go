package orchestrator

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

func TestJanitorPassDeletesFinishedWorkflowsInBatches(t *testing.T) {
	t.Parallel()
	bb := redistest.Client(t)
	ctx := context.Background()
	post := func() string {
		g := blackboard.NewGoal("janitor", 0, "user", nil)
		if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
			t.Fatal(err)
		}
		return g.ID
	}
	running := post()
	var done []string
	for range 3 {
		id := post()
		if _, err := bb.EndWorkflow(ctx, id, blackboard.WorkflowCompleted, "done", 1); err != nil {
			t.Fatal(err)
		}
		done = append(done, id)
	}
	// 1ns: retention on, and every ended workflow is already past it.
	j := NewJanitor(bb, Retention{Workflows: time.Nanosecond, Batch: 2}, zerolog.Nop())

	dry, err := j.Pass(ctx, true)
	if err != nil || len(dry.Workflows) != 2 || dry.Keys == 0 {
		t.Fatalf("dry pass = %+v, %v; want 2 workflows with keys", dry, err)
	}
	for _, id := range done {
		if _, err := bb.GetWorkflow(ctx, id); err != nil {
			t.Fatalf("the dry pass deleted %s: %v", id, err)
		}
	}
	first, err := j.Pass(ctx, false)
	if err != nil || len(first.Workflows) != 2 {
		t.Fatalf("first pass = %+v, %v; want 2 workflows (the batch)", first, err)
	}
	second, err := j.Pass(ctx, false)
	if err != nil || len(second.Workflows) != 1 {
		t.Fatalf("second pass = %+v, %v; want the last workflow", second, err)
	}
	for _, id := range done {
		if _, err := bb.GetWorkflow(ctx, id); !errors.Is(err, blackboard.ErrNotFound) {
			t.Errorf("finished workflow %s: %v, want deleted", id, err)
		}
	}
	if _, err := bb.GetWorkflow(ctx, running); err != nil {
		t.Errorf("running workflow %s: %v, want kept", running, err)
	}
	if third, err := j.Pass(ctx, false); err != nil || len(third.Workflows) != 0 {
		t.Errorf("third pass = %+v, %v; want nothing left to do", third, err)
	}
}

func TestJanitorZeroRetentionKeepsEverything(t *testing.T) {
	t.Parallel()
	bb := redistest.Client(t)
	ctx := context.Background()
	g := blackboard.NewGoal("kept", 0, "user", nil)
	if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.EndWorkflow(ctx, g.ID, blackboard.WorkflowFailed, "x", 1); err != nil {
		t.Fatal(err)
	}
	before, err := bb.EventsLength(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := NewJanitor(bb, Retention{}, zerolog.Nop()).Pass(ctx, false)
	if err != nil || len(rep.Workflows) != 0 || rep.Events != 0 || len(rep.Consumers) != 0 {
		t.Errorf("pass = %+v, %v; want nothing removed", rep, err)
	}
	if _, err := bb.GetWorkflow(ctx, g.ID); err != nil {
		t.Errorf("workflow: %v, want kept forever", err)
	}
	if after, _ := bb.EventsLength(ctx); after != before {
		t.Errorf("events %d → %d, want untouched", before, after)
	}
}

package blackboard_test

import (
	"errors"
	"testing"

	"github.com/settdev/sett/internal/redistest"
)

// TestDeadLetter sets a queue entry aside with its error and attempts:
// it leaves the queue (acknowledged and deleted) and shows in DeadLetters.
func TestDeadLetter(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t)
	raw := redistest.Raw(t)
	ctx := t.Context()
	g := startWorkflow(t, c)
	qc, err := c.QueueConsumer(ctx, "orchestrator", "o")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := qc.Next(ctx, nil, 10, 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("Next = %v, %v; want the goal's artefact_created", evs, err)
	}
	if err := qc.DeadLetter(ctx, evs[0], errors.New("handler exploded"), 5); err != nil {
		t.Fatal(err)
	}
	if n, err := raw.XLen(ctx, c.Keys().OrchestratorQueue()).Result(); err != nil || n != 0 {
		t.Errorf("queue length %d, %v; want the entry gone", n, err)
	}
	if p, err := qc.Pending(ctx, 10); err != nil || len(p) != 0 {
		t.Errorf("pending %v, %v; want none", p, err)
	}
	dls, err := c.DeadLetters(ctx, 10)
	if err != nil || len(dls) != 1 {
		t.Fatalf("DeadLetters = %v, %v; want one", dls, err)
	}
	d := dls[0]
	if d.Event.Type != evs[0].Type || d.Event.ArtefactID != g.ID || d.Event.StreamID != evs[0].StreamID ||
		d.Error != "handler exploded" || d.Attempts != 5 || d.AtMs <= 0 {
		t.Errorf("dead letter %+v", d)
	}
}

package orchestrator

import (
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// TestEventFailingNTimesIsDeadLettered: an entry is retried until its
// handling failed `after` times, then set aside with its last error; a
// success in between starts the count again.
func TestEventFailingNTimesIsDeadLettered(t *testing.T) {
	t.Parallel()
	bb := redistest.Client(t)
	ctx := t.Context()
	g := blackboard.NewGoal("goal", 0, "user", nil)
	if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	ec, err := bb.QueueConsumer(ctx, consumerGroup, consumerName)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := ec.Next(ctx, nil, 10, 0)
	if err != nil || len(evs) != 1 {
		t.Fatalf("Next = %v, %v", evs, err)
	}
	var d deadLetters
	d.init(ec, 3, zerolog.Nop())
	boom := errors.New("boom")
	d.failed(evs[0], boom)
	d.forget(evs[0].StreamID) // handled once: the count starts again
	for i := 0; i < 2; i++ {
		d.failed(evs[0], boom)
	}
	if dls, err := bb.DeadLetters(ctx, 10); err != nil || len(dls) != 0 {
		t.Fatalf("dead letters after 2 failures in a row = %v, %v; want none", dls, err)
	}
	d.failed(evs[0], boom)
	dls, err := bb.DeadLetters(ctx, 10)
	if err != nil || len(dls) != 1 || dls[0].Attempts != 3 || dls[0].Error != "boom" || dls[0].Event.StreamID != evs[0].StreamID {
		t.Fatalf("dead letters = %+v, %v; want the event after 3 attempts", dls, err)
	}
}

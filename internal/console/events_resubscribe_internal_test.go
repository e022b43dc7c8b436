package console

import (
	"context"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

func TestAPageThatComesBackAfterTheLastLeftStillHearsChanges(t *testing.T) {
	bb := redistest.Client(t)
	ctx := context.Background()
	h := &hub{bb: bb, cache: &readCache{}, warn: func(err error) { t.Errorf("reader: %v", err) }}
	a, unsubA, err := h.subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := blackboard.NewGoal("first", 0, "user", nil)
	if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	waitChange(t, a, g.ID)
	unsubA()
	b, unsubB, err := h.subscribe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer unsubB()
	g2 := blackboard.NewGoal("second", 0, "user", nil)
	if err := bb.CreateArtefact(ctx, g2, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	waitChange(t, b, g2.ID)
}
